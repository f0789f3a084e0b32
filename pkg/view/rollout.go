package view

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// Blueprint is what PrintRollout reads of a ClusterSupplyChain or ClusterDelivery.
type Blueprint struct {
	// Kind is v1alpha1.KindClusterSupplyChain or v1alpha1.KindClusterDelivery.
	Kind       string
	Name       string
	Generation int64
	// Strategy is spec.rolloutStrategy, nil without one.
	Strategy *v1alpha1.RolloutStrategy
	Status   v1alpha1.BlueprintStatus
}

// PrintRollout prints a blueprint's rollout (DESIGN §9): its strategy, the target and
// stable revisions, the group being admitted, the RolloutProgressing and RolloutDegraded
// conditions, the owners in each state per group, and the failed owners.
func PrintRollout(w io.Writer, bp Blueprint, opts Options) error {
	var b strings.Builder
	summary := table{}
	for _, f := range bp.Summary(opts) {
		summary.row(plain(f.Label+":"), f.Value)
	}
	if err := summary.write(&b, opts.Color); err != nil {
		return err
	}
	if r := bp.Status.Rollout; r != nil {
		b.WriteByte('\n')
		groups := table{}
		groups.plainRow("GROUP", "TOAPPLY", "PROGRESSING", "SUCCEEDED", "FAILED", "TIMEOUT", "SKIP")
		for _, g := range r.Groups {
			name := g.Name
			if name == "" {
				name = "(no group)"
			}
			groups.plainRow(append([]string{name}, countCells(g.Counts)...)...)
		}
		groups.plainRow(append([]string{"all"}, countCells(r.Counts)...)...)
		if err := groups.write(&b, opts.Color); err != nil {
			return err
		}
		if len(r.FailedOwners) > 0 {
			fmt.Fprintf(&b, "\nFailed owners: %s\n", Escape(strings.Join(r.FailedOwners, ", ")))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Summary is the blueprint's rollout at a glance, as PrintRollout prints it first: its
// kind, name and generation, its strategy, the target and stable revisions, the group
// being admitted, RolloutProgressing and RolloutDegraded, and when it is checked next.
func (bp Blueprint) Summary(opts Options) []Field {
	fields := []Field{{bp.Kind, plain(fmt.Sprintf("%s (generation %d)", bp.Name, bp.Generation))}}
	r := bp.Status.Rollout
	if bp.Strategy == nil {
		fields = append(fields, Field{"Strategy", plain("none: a change reaches every owner at once")})
	} else {
		fields = append(fields, Field{"Strategy", plain(StrategyLine(bp.Strategy))})
	}
	if bp.Strategy != nil && r == nil {
		fields = append(fields, Field{"Rollout", plain("no revision yet (every template the blueprint references must exist)")})
	}
	if r != nil {
		target := orDash(r.TargetRevision)
		switch {
		case r.Complete:
			target += " (complete)"
		case r.StableRevision != "" && r.StableRevision != r.TargetRevision:
			target += " (rolling out over " + r.StableRevision + ")"
		}
		fields = append(fields, Field{"Revision", plain(target)})
		if r.CurrentGroup != "" {
			fields = append(fields, Field{"Group", plain(r.CurrentGroup)})
		}
	}
	for _, t := range []string{v1alpha1.ConditionRolloutProgressing, v1alpha1.ConditionRolloutDegraded} {
		if c := meta.FindStatusCondition(bp.Status.Conditions, t); c != nil {
			fields = append(fields, Field{strings.TrimPrefix(t, "Rollout"),
				join(statusText(c.Status), plain(reasonMessage(c)), plain("("+opts.Age(c.LastTransitionTime.Time)+")"))})
		}
	}
	if r != nil && r.NextCheckTime != nil {
		fields = append(fields, Field{"Next check", plain(r.NextCheckTime.UTC().Format(time.RFC3339) + " (" + opts.until(r.NextCheckTime.Time) + ")")})
	}
	return fields
}

// StrategyLine is a rollout strategy in one line.
func StrategyLine(s *v1alpha1.RolloutStrategy) string {
	parts := []string{string(s.Type)}
	if len(s.Groups) > 0 {
		names := make([]string, len(s.Groups))
		for i, g := range s.Groups {
			names[i] = g.Name
		}
		parts = append(parts, "groups "+strings.Join(names, ", "))
	}
	if len(s.MandatoryGroups) > 0 {
		parts = append(parts, "mandatory "+strings.Join(s.MandatoryGroups, ", "))
	}
	if s.OwnersPerGroup != nil {
		parts = append(parts, s.OwnersPerGroup.String()+" per group")
	}
	if s.MaxConcurrency != nil {
		parts = append(parts, "max concurrency "+s.MaxConcurrency.String())
	}
	if s.MaxFailures != nil {
		parts = append(parts, "max failures "+s.MaxFailures.String())
	}
	if s.MinSuccessTime != nil {
		parts = append(parts, "min success time "+s.MinSuccessTime.Duration.String())
	}
	if s.ProgressDeadline != "" {
		parts = append(parts, "progress deadline "+string(s.ProgressDeadline))
	}
	if s.Paused {
		parts = append(parts, "paused")
	}
	return strings.Join(parts, "; ")
}

func countCells(c v1alpha1.RolloutCounts) []string {
	out := make([]string, 0, 6)
	for _, n := range []int32{c.ToApply, c.Progressing, c.Succeeded, c.Failed, c.TimeOut, c.Skip} {
		out = append(out, strconv.Itoa(int(n)))
	}
	return out
}

// until is "in <duration>" until t, as age prints durations, or "due" once t has passed.
func (o Options) until(t time.Time) string {
	if !t.After(o.Now) {
		return "due"
	}
	return "in " + duration.HumanDuration(t.Sub(o.Now))
}

// BlueprintOf is the Blueprint of a ClusterSupplyChain or ClusterDelivery.
func BlueprintOf(obj metav1.Object) (Blueprint, bool) {
	b, ok := obj.(v1alpha1.Blueprint)
	if !ok {
		return Blueprint{}, false
	}
	return Blueprint{Kind: v1alpha1.BlueprintKindOf(b).Kind, Name: b.GetName(), Generation: b.GetGeneration(), Strategy: b.GetRolloutStrategy(), Status: *b.GetBlueprintStatus()}, true
}
