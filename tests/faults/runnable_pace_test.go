package faults

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// calmRunnables is how many Runnables of another team converge beside a runaway one.
const calmRunnables = 20

// A Runnable whose template reads its own resourceVersion differs from its newest run after
// every status write, so each pass calls for a new run: left alone it would create runs as
// fast as the controller can write (Cartographer does). Surveyor paces it (DESIGN §12): five
// runs at once, then one every 12 s, with a RunDeferred event saying so; while it runs away,
// 20 Runnables of another team each get their one run and keep it.
func TestRunawayRunnableIsPacedAndStallsNoOther(t *testing.T) {
	runawayNS := newNamespace(t, "faults-runaway")
	calmNS := newNamespace(t, "faults-calm")
	runaway := configMapRunTemplate(t, "faults-runaway-run", "$(runnable.metadata.resourceVersion)$")
	calm := configMapRunTemplate(t, "faults-calm-run", "$(runnable.spec.inputs.revision)$")
	c := launchController(t, "surveyor-runnable-runaway")
	c.waitLeader(t, 2*time.Minute)

	createRunnables(t, runawayNS, runaway.Name, 1)
	start := time.Now()
	createRunnables(t, calmNS, calm.Name, calmRunnables)
	eventually(t, 2*time.Minute, func() (bool, string) {
		runs, statuses := runnableState(t, calmNS)
		return len(runs) == calmRunnables && len(statuses) == calmRunnables,
			fmt.Sprintf("%d runs of %d calm runnables with a status, want %d", len(runs), len(statuses), calmRunnables)
	})
	t.Logf("%d calm runnables got their runs in %s beside a runaway one", calmRunnables, time.Since(start).Round(time.Millisecond))

	// 30 s spans the burst and two paces: the runaway's runs stay within its budget, and
	// the calm ones keep one run each.
	env.Consistently(ctx, t, 30*time.Second, 500*time.Millisecond, func() (bool, string) {
		runs := runsOf(t, runawayNS)
		budget := 5 + int(time.Since(start)/(12*time.Second)) + 1
		if runs > budget {
			return false, fmt.Sprintf("the runaway Runnable has %d runs %s after it started, more than its budget of %d", runs, time.Since(start).Round(time.Second), budget)
		}
		if calmRuns := runsOf(t, calmNS); calmRuns != calmRunnables {
			return false, fmt.Sprintf("%d calm runs, want %d", calmRuns, calmRunnables)
		}
		return true, ""
	})
	runs := runsOf(t, runawayNS)
	t.Logf("the runaway Runnable has %d runs after %s", runs, time.Since(start).Round(time.Second))
	if runs < 6 {
		t.Errorf("the runaway Runnable has %d runs: it did not run away, so the test proves nothing", runs)
	}
	eventually(t, time.Minute, func() (bool, string) {
		var events corev1.EventList
		if err := k8s.List(ctx, &events, client.InNamespace(runawayNS)); err != nil {
			return false, err.Error()
		}
		for _, e := range events.Items {
			if e.Reason == v1alpha1.EventRunDeferred && e.InvolvedObject.Kind == "Runnable" {
				return true, ""
			}
		}
		return false, fmt.Sprintf("no %s event among %d", v1alpha1.EventRunDeferred, len(events.Items))
	})
}

// runsOf counts the runs in ns.
func runsOf(t *testing.T, ns string) int {
	runs, _ := runnableState(t, ns)
	return len(runs)
}
