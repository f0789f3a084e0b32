package realizer

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
	"k8s.io/apimachinery/pkg/types"
)

// Run pacing (DESIGN §12): a Runnable whose template reads what changes with each of its
// runs (its own status or resourceVersion, an object the run itself changes) differs from its
// newest run on every pass, and would create runs as fast as the controller can write them,
// each one a write to the API server on its tenant's behalf. A Runnable gets runBurst runs at
// once and then one per runPace: its run is late, never lost, and no other is slowed.
const (
	runBurst = 5
	runPace  = 12 * time.Second
)

// runPacer holds the run budget of each Runnable that has one; a Runnable that is gone is
// forgotten.
type runPacer struct {
	mu    sync.Mutex
	limit map[types.NamespacedName]*rate.Limiter
}

// wait is how long the Runnable must wait before its next run: zero when it may create it
// now, which spends its budget.
func (p *runPacer) wait(rn types.NamespacedName, now time.Time) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.limit == nil {
		p.limit = map[types.NamespacedName]*rate.Limiter{}
	}
	l, ok := p.limit[rn]
	if !ok {
		l = rate.NewLimiter(rate.Every(runPace), runBurst)
		p.limit[rn] = l
	}
	r := l.ReserveN(now, 1)
	d := r.DelayFrom(now)
	if d > 0 {
		r.CancelAt(now)
	}
	return d
}

func (p *runPacer) forget(rn types.NamespacedName) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.limit, rn)
}
