package realizer

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// A Runnable gets runBurst runs at once, then one per runPace; another Runnable has its own
// budget, and a Runnable forgotten starts afresh.
func TestRunPacer(t *testing.T) {
	var p runPacer
	a, b := types.NamespacedName{Namespace: "t1", Name: "a"}, types.NamespacedName{Namespace: "t2", Name: "b"}
	now := time.Unix(1_000_000, 0)
	for i := range runBurst {
		if d := p.wait(a, now); d != 0 {
			t.Fatalf("run %d waits %s, want none within the burst", i+1, d)
		}
	}
	if d := p.wait(a, now); d != runPace {
		t.Errorf("the run after the burst waits %s, want %s", d, runPace)
	}
	if d := p.wait(a, now.Add(runPace/2)); d != runPace/2 {
		t.Errorf("half a pace later it waits %s, want %s (a deferral spends nothing)", d, runPace/2)
	}
	if d := p.wait(a, now.Add(runPace)); d != 0 {
		t.Errorf("a pace later it waits %s, want none", d)
	}
	if d := p.wait(b, now); d != 0 {
		t.Errorf("another Runnable waits %s, want none", d)
	}
	p.forget(a)
	if d := p.wait(a, now.Add(runPace)); d != 0 || len(p.limit) != 2 {
		t.Errorf("forgotten, it waits %s with %d budgets kept", d, len(p.limit))
	}
}
