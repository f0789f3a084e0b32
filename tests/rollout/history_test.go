package rollout

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/surveyor-dev/surveyor/internal/harness"
	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// observation is one Workload as the test's informer saw it.
type observation struct {
	name string
	// running is status.blueprintRevision.
	running string
	// record is status.rollout, nil if none.
	record *v1alpha1.OwnerRolloutStatus
	// ready and blueprintReady are the Ready and SupplyChainReady conditions, nil if none.
	ready, blueprintReady *metav1.Condition
}

// history is every state of a namespace's Workloads that the API server went through, in order.
// One watch of one namespace delivers every change in resourceVersion order, and the API server
// admits one write at a time, so replaying the log visits every instant of the namespace's
// history: a count computed at each step is the count at every moment, not at some sampled ones.
type history struct {
	*harness.History[*v1alpha1.Workload]
}

// watchWorkloads records the history of ns's Workloads from now until the test ends.
func watchWorkloads(t *testing.T, ns string) history {
	t.Helper()
	return history{harness.Record(ctx, t, env, &v1alpha1.Workload{}, harness.InNamespace(ns))}
}

func (h history) observations() []observation {
	states := h.States()
	out := make([]observation, len(states))
	for i, o := range states {
		wl := o.Object
		out[i] = observation{
			name: wl.Name, running: wl.Status.BlueprintRevision, record: wl.Status.Rollout,
			ready:          readyCondition(wl),
			blueprintReady: meta.FindStatusCondition(wl.Status.Conditions, v1alpha1.ConditionSupplyChainReady),
		}
	}
	return out
}

// maxInFlight is the most Workloads that were at once Progressing at the target revision, and
// how many observations the history holds.
func (h history) maxInFlight(target string) (most, observed int) {
	inFlight := map[string]bool{}
	n := 0
	for _, o := range h.observations() {
		now := o.record != nil && o.record.Revision == target && o.record.State == v1alpha1.RolloutProgressing
		switch {
		case now && !inFlight[o.name]:
			n++
		case !now && inFlight[o.name]:
			n--
		}
		inFlight[o.name] = now
		most = max(most, n)
		observed++
	}
	return most, observed
}

// stateRank orders the states an owner goes through once in a rollout without a flap.
var stateRank = map[v1alpha1.RolloutState]int{
	v1alpha1.RolloutToApply:     0,
	v1alpha1.RolloutProgressing: 1,
	v1alpha1.RolloutSucceeded:   2,
	v1alpha1.RolloutTimeOut:     2,
}

// problems lists what went wrong in any Workload's rollout to target, for Workloads that do not
// flap (their health at the target never changes): one ran the target before it was admitted
// to it, was admitted twice (its admittedTime changed once set) or went backwards (a state of
// lower stateRank, or one outside it: Failed and Skip do not happen to these Workloads).
func (h history) problems(target string) []string {
	var out []string
	type seen struct {
		admitted *metav1.Time
		rank     int
	}
	last := map[string]seen{}
	for _, o := range h.observations() {
		admitted := o.record != nil && o.record.Revision == target && o.record.State != v1alpha1.RolloutToApply
		if o.running == target && !admitted {
			out = append(out, fmt.Sprintf("%s runs %s but its record is %s", o.name, target, recordString(o.record)))
		}
		if o.record == nil || o.record.Revision != target {
			continue
		}
		rank, ok := stateRank[o.record.State]
		if !ok {
			out = append(out, fmt.Sprintf("%s went %s; Ready %s, SupplyChainReady %s", o.name, recordString(o.record), conditionString(o.ready), conditionString(o.blueprintReady)))
			continue
		}
		prev := last[o.name]
		if rank < prev.rank {
			out = append(out, fmt.Sprintf("%s went back to %s", o.name, recordString(o.record)))
		}
		if prev.admitted != nil && !prev.admitted.Equal(o.record.AdmittedTime) {
			out = append(out, fmt.Sprintf("%s admitted at %s, then again: %s", o.name, prev.admitted.UTC().Format(timeFormat), recordString(o.record)))
		}
		if o.record.AdmittedTime != nil && prev.admitted == nil {
			prev.admitted = o.record.AdmittedTime
		}
		prev.rank = rank
		last[o.name] = prev
	}
	return out
}

// checkHistory fails the test with problems(target), if any.
func (h history) checkHistory(t *testing.T, target string) {
	t.Helper()
	problems := h.problems(target)
	for i, p := range problems {
		if i == 10 {
			t.Errorf("... and %d more", len(problems)-i)
			break
		}
		t.Error(p)
	}
}

const timeFormat = "15:04:05"

func recordString(r *v1alpha1.OwnerRolloutStatus) string {
	if r == nil {
		return "none"
	}
	s := fmt.Sprintf("{%s %s group=%q since %s", r.Revision, r.State, r.Group, r.LastTransitionTime.UTC().Format(timeFormat))
	if r.AdmittedTime != nil {
		s += " admitted " + r.AdmittedTime.UTC().Format(timeFormat)
	}
	return s + "}"
}

// readyCondition is the Workload's Ready condition, nil if none.
func readyCondition(wl *v1alpha1.Workload) *metav1.Condition {
	return meta.FindStatusCondition(wl.Status.Conditions, v1alpha1.ConditionReady)
}

func conditionString(c *metav1.Condition) string {
	if c == nil {
		return "none"
	}
	return fmt.Sprintf("%s/%s %q since %s", c.Status, c.Reason, c.Message, c.LastTransitionTime.UTC().Format(timeFormat))
}
