package faults

import (
	"fmt"
	"strconv"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/surveyor-dev/surveyor/internal/harness"
	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// statusMonitor watches every Workload of a namespace for the whole test and reports
// each time a status went backwards. None of these tests changes a Workload's spec, so
// once a Workload is Ready it must stay Ready, at the same or a newer observed
// generation, with at least as many stamped resources and the same output digests:
// a restarted controller, a new leader or a returning API server must pick up where
// the last one left off, not redo or undo it: Ready keeps its lastTransitionTime and a
// rollout record stays as it is.
type statusMonitor struct {
	history *harness.History[*v1alpha1.Workload]
}

// snapshot is what the monitor remembers of one Workload.
type snapshot struct {
	rv                 string
	generation         int64
	observedGeneration int64
	ready              bool
	stamped            int               // resources with a stampedRef
	digests            map[string]string // resource/output -> digest
	readySince         metav1.Time       // Ready's lastTransitionTime
	rollout            string            // the rollout record, "" without one
}

func snapshotOf(wl *v1alpha1.Workload) snapshot {
	s := snapshot{
		rv: wl.ResourceVersion, generation: wl.Generation, observedGeneration: wl.Status.ObservedGeneration,
		ready: isReady(wl), digests: map[string]string{},
	}
	if c := meta.FindStatusCondition(wl.Status.Conditions, v1alpha1.ConditionReady); c != nil {
		s.readySince = c.LastTransitionTime
	}
	if r := wl.Status.Rollout; r != nil {
		s.rollout = fmt.Sprintf("%s at %s (admitted %v, ready %v)", r.State, r.Revision, r.AdmittedTime, r.ReadyTime)
	}
	for _, r := range wl.Status.Resources {
		if r.StampedRef != nil {
			s.stamped++
		}
		for _, o := range r.Outputs {
			s.digests[r.Name+"/"+o.Name] = o.Digest
		}
	}
	return s
}

// monitorWorkloads starts a statusMonitor over ns until the test ends. Its informer
// relists and carries on when the API server comes back.
func monitorWorkloads(t *testing.T, ns string) *statusMonitor {
	t.Helper()
	return &statusMonitor{history: harness.Record(ctx, t, env, &v1alpha1.Workload{}, harness.InNamespace(ns))}
}

// regressions replays a history and returns every time a status went backwards, and how
// many Workloads it saw.
func regressions(states []harness.Observed[*v1alpha1.Workload]) (violations []string, workloads int) {
	last := map[string]snapshot{}
	for _, o := range states {
		wl := o.Object
		now := snapshotOf(wl)
		prev, seen := last[wl.Name]
		// Only move forward: an informer replays an older state after a relist only if the
		// API server itself went back, which is a failure of another kind.
		if seen && olderRV(now.rv, prev.rv) {
			continue
		}
		last[wl.Name] = now
		if !seen {
			continue
		}
		var problems []string
		if now.observedGeneration < prev.observedGeneration {
			problems = append(problems, fmt.Sprintf("observedGeneration went from %d to %d", prev.observedGeneration, now.observedGeneration))
		}
		if prev.ready && now.generation == prev.generation {
			if !now.ready {
				c := meta.FindStatusCondition(wl.Status.Conditions, v1alpha1.ConditionReady)
				problems = append(problems, fmt.Sprintf("Ready went from True to %s", condString(c)))
			}
			if now.ready && !now.readySince.Equal(&prev.readySince) {
				problems = append(problems, fmt.Sprintf("Ready's lastTransitionTime moved from %s to %s", prev.readySince, now.readySince))
			}
			if prev.rollout != "" && now.rollout != prev.rollout {
				problems = append(problems, fmt.Sprintf("the rollout record moved from %s to %s", prev.rollout, now.rollout))
			}
			if now.stamped < prev.stamped {
				problems = append(problems, fmt.Sprintf("stamped resources went from %d to %d", prev.stamped, now.stamped))
			}
			for k, d := range prev.digests {
				if now.digests[k] != d {
					problems = append(problems, fmt.Sprintf("output %s changed from %s to %q", k, d, now.digests[k]))
				}
			}
		}
		for _, p := range problems {
			violations = append(violations, fmt.Sprintf("workload %s (resourceVersion %s -> %s): %s", wl.Name, prev.rv, now.rv, p))
		}
	}
	return violations, len(last)
}

func olderRV(a, b string) bool {
	x, errA := strconv.ParseUint(a, 10, 64)
	y, errB := strconv.ParseUint(b, 10, 64)
	return errA == nil && errB == nil && x < y
}

func condString(c *metav1.Condition) string {
	if c == nil {
		return "missing"
	}
	return fmt.Sprintf("%s (%s: %s)", c.Status, c.Reason, c.Message)
}

// check fails the test with every regression seen so far.
func (m *statusMonitor) check(t *testing.T) {
	t.Helper()
	states := m.history.States()
	violations, workloads := regressions(states)
	for i, v := range violations {
		if i == 20 {
			t.Errorf("... and %d more status regressions", len(violations)-20)
			break
		}
		t.Errorf("status went backwards: %s", v)
	}
	t.Logf("status monitor: %d workload events from %d workloads, %d regressions", len(states), workloads, len(violations))
}
