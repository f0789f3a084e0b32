package rollout

import (
	"maps"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// Owner is what the planner needs to know of one owner (Workload or Deliverable) of the blueprint.
type Owner struct {
	// Key is "namespace/name"; chunks and Progressive admission follow Key order.
	Key string
	// Labels choose the owner's group.
	Labels map[string]string
	// Running is status.blueprintRevision, the revision the owner is realized at ("" if never).
	Running string
	// Record is status.rollout as last written, nil if none.
	Record *v1alpha1.OwnerRolloutStatus
	// Ready is the owner's Ready condition, nil if none.
	Ready *metav1.Condition
	// Generation is metadata.generation: Ready counts only when it was observed at this generation.
	Generation int64
	// Stale says the owner's status was written while its blueprint's newest spec was not yet
	// reconciled: its Ready then says nothing of any revision (DESIGN §3 makes every owner of a
	// blueprint Ready=Unknown while its spec is being checked). The planner neither admits nor
	// moves a stale owner; its next status write, which the blueprint's own status write
	// triggers, brings it back into the decision.
	Stale bool
}

// Input is everything a decision depends on.
type Input struct {
	// Strategy is the blueprint's spec.rolloutStrategy.
	Strategy v1alpha1.RolloutStrategy
	// Target is the blueprint's current revision.
	Target string
	// Previous is the blueprint's status.rollout as last written, nil at first sight.
	Previous *v1alpha1.BlueprintRolloutStatus
	// Degraded is the blueprint's RolloutDegraded condition as last written, nil if none: a
	// breach is an event only when it is new to the blueprint, whoever moved the owners there.
	Degraded *metav1.Condition
	// Owners are every owner the blueprint selects, in any order.
	Owners []Owner
	// Now is the time of the decision.
	Now time.Time
}

// Event is an event to record on the blueprint.
type Event struct {
	Warning bool
	Reason  string
	Message string
}

// Plan is a decision: what to write and what to record.
type Plan struct {
	// Owners are the owners' records for the target, parallel to Input.Owners. A ToApply record
	// is not written: an owner not admitted keeps the record it has (DESIGN §9, Cost). Any
	// other record that did not change compares equal to the owner's Record, so the caller
	// can skip the write.
	Owners []v1alpha1.OwnerRolloutStatus
	// Status is the blueprint's status.rollout.
	Status v1alpha1.BlueprintRolloutStatus
	// Progressing is the RolloutProgressing condition, without LastTransitionTime or
	// ObservedGeneration: the caller's condition helper stamps those.
	Progressing metav1.Condition
	// Degraded is the RolloutDegraded condition, likewise.
	Degraded metav1.Condition
	// Events happened in this decision: each is derived from a difference between Input and Plan,
	// so a replay of the same input records none.
	Events []Event
}

// PinnedRevision is the revision an owner must be stamped from: its record's revision once it is
// admitted (any state but ToApply); otherwise the revision it runs; otherwise, for a new owner not
// yet admitted, the blueprint's stable revision. Call it with the records and status of a Plan.
func PinnedRevision(owner *v1alpha1.OwnerRolloutStatus, running string, blueprint *v1alpha1.BlueprintRolloutStatus) string {
	switch {
	case owner != nil && owner.State != v1alpha1.RolloutToApply:
		return owner.Revision
	case running != "":
		return running
	case blueprint != nil:
		return blueprint.StableRevision
	}
	return ""
}

// phase is where the blueprint's rollout stands before this decision.
type phase struct {
	// stable is the last revision that reached every owner.
	stable string
	// settled: the target already reached every owner, or is seen for the first time (there is
	// nothing else to run). Every owner is admitted at once and no rollout is in progress.
	settled bool
	// started: the target is new in this decision.
	started bool
	// superseded is the previous target when it had not reached every owner yet.
	superseded string
}

// phaseOf reads the phase from the blueprint's status as last written; without one, from the
// owners' records: a blueprint restored without its status resumes where its owners say the
// rollout is, and only a blueprint none of whose owners has a record sees its first revision.
func phaseOf(target string, prev *v1alpha1.BlueprintRolloutStatus, members []*member) phase {
	switch {
	case prev != nil && prev.TargetRevision == target:
		return phase{stable: prev.StableRevision, settled: prev.Complete}
	case prev != nil && prev.TargetRevision != "":
		p := phase{stable: prev.StableRevision, started: true}
		if !prev.Complete {
			p.superseded = prev.TargetRevision
		}
		return p
	}
	recorded := slices.ContainsFunc(members, func(m *member) bool { return m.owner.Record != nil })
	if !recorded {
		return phase{stable: target, settled: true}
	}
	// The stable revision is the one most owners not admitted to the target run (the
	// alphabetically first of a tie); the target when every owner is admitted to it.
	p := phase{stable: target, started: !slices.ContainsFunc(members, admitted)}
	runs := map[string]int{}
	for _, m := range members {
		if r := m.runs(); !admitted(m) && r != "" {
			runs[r]++
		}
	}
	most := 0
	for _, r := range slices.Sorted(maps.Keys(runs)) {
		if runs[r] > most {
			p.stable, most = r, runs[r]
		}
	}
	return p
}

// Decide plans one step of a blueprint's rollout. See the package documentation.
func Decide(in Input) Plan {
	d := newDecision(in)
	d.settle()
	return d.plan()
}
