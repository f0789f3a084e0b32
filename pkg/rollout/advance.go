package rollout

import (
	"time"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// Advance is an admitted owner's record once the owner has been realized again: the state the
// planner would move it to now (Succeeded after its soak, Failed, back to Progressing), so that
// the owner's reconciler writes it with the rest of the owner's status in one write instead of
// leaving it to the blueprint's next decision. An owner that is not admitted keeps its record as
// it is: admission is the planner's alone. stable is the blueprint's stable revision; the
// blueprint's target may not show the owner's revision yet, since owners are pinned before the
// blueprint's status is written.
func Advance(strategy v1alpha1.RolloutStrategy, stable string, owner Owner, now time.Time) *v1alpha1.OwnerRolloutStatus {
	rec := owner.Record
	if rec == nil || rec.State == v1alpha1.RolloutToApply {
		return rec
	}
	// The owner is admitted, so a decision over it alone only steps its own state.
	previous := &v1alpha1.BlueprintRolloutStatus{StableRevision: stable, TargetRevision: rec.Revision}
	plan := Decide(Input{Strategy: strategy, Target: rec.Revision, Previous: previous, Owners: []Owner{owner}, Now: now})
	return &plan.Owners[0]
}

// SelfAdmitting reports whether owners admit themselves under strategy: type All (which has no
// failure budget), not paused, with no mandatory group, where an owner's admission waits for
// nothing but the target. Each owner then writes its own admission with the rest of its status
// when it sees the target, and the blueprint's decisions only step owners already admitted.
func SelfAdmitting(s v1alpha1.RolloutStrategy) bool {
	return s.Type == v1alpha1.RolloutAll && !s.Paused && len(s.MandatoryGroups) == 0
}

// Admit is an owner's record once it sees the blueprint's rollout status: under a
// self-admitting strategy, admitted to the target (Progressing, or Skip when it is not Ready), as
// the planner would admit it. Otherwise, or once admitted, the record is as it was, except that an
// owner with no record at all (a new one) says it waits for the target: ToApply, written with
// its first status, which costs no write of its own.
func Admit(strategy v1alpha1.RolloutStrategy, blueprint *v1alpha1.BlueprintRolloutStatus, owner Owner, now time.Time) *v1alpha1.OwnerRolloutStatus {
	rec := owner.Record
	if blueprint == nil || blueprint.TargetRevision == "" ||
		rec != nil && rec.Revision == blueprint.TargetRevision && rec.State != v1alpha1.RolloutToApply {
		return rec
	}
	self := SelfAdmitting(strategy)
	if self {
		// Nothing gates the admission, and nothing but the owner's own reconcile would make it:
		// a status written before the blueprint was reconciled (Stale) must not leave the owner
		// waiting. At worst it is Skip, which neither blocks nor counts.
		owner.Stale = false
	}
	plan := Decide(Input{Strategy: strategy, Target: blueprint.TargetRevision, Previous: blueprint, Owners: []Owner{owner}, Now: now})
	switch got := &plan.Owners[0]; {
	case got.State != v1alpha1.RolloutToApply && self:
		return got
	case rec == nil:
		return &v1alpha1.OwnerRolloutStatus{Revision: got.Revision, State: v1alpha1.RolloutToApply, Group: got.Group, LastTransitionTime: got.LastTransitionTime}
	}
	return rec
}
