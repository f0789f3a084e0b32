package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/internal/harness"
	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// workloadName is the i-th benchmark Workload's name.
func workloadName(i int) string { return fmt.Sprintf("w-%05d", i) }

// groupOf is the rollout group of the i-th Workload among groups, round robin: g0, g1, ...
// It is "" when there are no groups.
func groupOf(i, groups int) string {
	if groups <= 0 {
		return ""
	}
	return fmt.Sprintf("g%d", i%groups)
}

// newWorkload is a Workload with a git source the templates read, labelled for the
// supply chain whose selector value is chain and, unless group is "", for a rollout group.
func newWorkload(ns, name, chain, group string) *v1alpha1.Workload {
	labels := map[string]string{chainLabel: chain}
	if group != "" {
		labels[groupLabel] = group
	}
	return &v1alpha1.Workload{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Spec: v1alpha1.WorkloadSpec{
			Source: &v1alpha1.Source{Git: &v1alpha1.GitSource{
				URL: "https://git.example.com/bench/" + name + ".git",
				Ref: &v1alpha1.GitRef{Branch: "main"},
			}},
		},
	}
}

// createParallel calls create(i) for i in [0, n) from workers goroutines and returns
// the first error. Each create retries transient failures (throttling, timeouts) a few
// times, since a 2-core API server under load does produce them.
func createParallel(ctx context.Context, n, workers int, create func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan int)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				var err error
				for attempt := 0; attempt < 5; attempt++ {
					if err = create(ctx, i); err == nil || apierrors.IsAlreadyExists(err) {
						err = nil
						break
					}
					if !apierrors.IsTooManyRequests(err) && !apierrors.IsServerTimeout(err) && !apierrors.IsTimeout(err) && !apierrors.IsInternalError(err) {
						break
					}
					time.Sleep(time.Duration(attempt+1) * 200 * time.Millisecond)
				}
				if err != nil {
					errs <- err
					cancel()
					return
				}
			}
		}()
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return ctx.Err()
	}
}

// tracker follows the bench Workloads through one watch (harness.Env.Watch, an
// informer, which resumes after a dropped watch without polling): when each first became
// Ready at its current generation, each one's ResourcesHealthy status for the
// propagation probe, and its blueprint revision and status changes for the rollout
// phase, and status transitions for the restart phase.
type tracker struct {
	mu       sync.Mutex
	want     int
	ready    map[string]time.Time
	healthy  map[string]metav1.ConditionStatus
	revision map[string]string
	waiters  map[*waiter]bool
	allReady chan struct{}
	events   int
	// marks, while recording (not nil), are each Workload's status changes in the order
	// seen, each as the rollout record it left.
	marks map[string][]rolloutMark
	// transitions, while the restart phase records (not nil), takes in every status
	// change.
	transitions *transitionLog
}

// rolloutMark is the rollout record a Workload's status change left: zero when it has none.
type rolloutMark struct {
	revision string
	state    v1alpha1.RolloutState
}

// waiter is one propagation probe waiting for a Workload's ResourcesHealthy to reach
// a status.
type waiter struct {
	name string
	want metav1.ConditionStatus
	seen chan time.Time
}

func newTracker(want int) *tracker {
	return &tracker{
		want: want, ready: map[string]time.Time{}, healthy: map[string]metav1.ConditionStatus{},
		revision: map[string]string{}, waiters: map[*waiter]bool{}, allReady: make(chan struct{}),
	}
}

// run starts the watch of ns's Workloads and returns once it has delivered their first
// list; stop ends it.
func (t *tracker) run(ctx context.Context, e *harness.Env, ns string) (stop func(), err error) {
	stop, err = e.Watch(ctx, harness.InNamespace(ns), &v1alpha1.Workload{}, func(old, cur client.Object) {
		was, _ := old.(*v1alpha1.Workload)
		t.observe(was, cur.(*v1alpha1.Workload))
	})
	if err != nil {
		return nil, fmt.Errorf("the Workload watch: %w", err)
	}
	return stop, nil
}

// isReady is Ready=True for the Workload's current generation.
func isReady(wl *v1alpha1.Workload) bool {
	c := meta.FindStatusCondition(wl.Status.Conditions, v1alpha1.ConditionReady)
	return c != nil && c.Status == metav1.ConditionTrue && wl.Status.ObservedGeneration == wl.Generation
}

// observe takes in a Workload the watch delivered, and the copy it replaces (nil when
// it is new).
func (t *tracker) observe(old, wl *v1alpha1.Workload) {
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.events++
	t.revision[wl.Name] = wl.Status.BlueprintRevision
	if t.marks != nil && old != nil && !equality.Semantic.DeepEqual(old.Status, wl.Status) {
		var m rolloutMark
		if ro := wl.Status.Rollout; ro != nil {
			m = rolloutMark{revision: ro.Revision, state: ro.State}
		}
		t.marks[wl.Name] = append(t.marks[wl.Name], m)
	}
	if t.transitions != nil && old != nil {
		t.transitions.add(wl.Name, &old.Status, &wl.Status)
	}
	if _, seen := t.ready[wl.Name]; !seen && isReady(wl) {
		t.ready[wl.Name] = now
		if len(t.ready) == t.want {
			close(t.allReady)
		}
	}
	status := metav1.ConditionUnknown
	if c := meta.FindStatusCondition(wl.Status.Conditions, v1alpha1.ConditionResourcesHealthy); c != nil {
		status = c.Status
	}
	t.healthy[wl.Name] = status
	for w := range t.waiters {
		if w.name == wl.Name && w.want == status {
			w.seen <- now
			delete(t.waiters, w)
		}
	}
}

// readyCount is how many Workloads have been Ready at least once.
func (t *tracker) readyCount() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.ready)
}

// readyTimes returns when each Workload first became Ready.
func (t *tracker) readyTimes() []time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]time.Time, 0, len(t.ready))
	for _, at := range t.ready {
		out = append(out, at)
	}
	return out
}

// await registers interest in name's ResourcesHealthy reaching want; register before
// causing the change, so an update cannot slip by unobserved.
func (t *tracker) await(name string, want metav1.ConditionStatus) *waiter {
	w := &waiter{name: name, want: want, seen: make(chan time.Time, 1)}
	t.mu.Lock()
	t.waiters[w] = true
	t.mu.Unlock()
	return w
}

// cancel forgets a waiter that timed out.
func (t *tracker) cancel(w *waiter) {
	t.mu.Lock()
	delete(t.waiters, w)
	t.mu.Unlock()
}

// healthOf is name's last seen ResourcesHealthy status.
func (t *tracker) healthOf(name string) metav1.ConditionStatus {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.healthy[name]
}

// record starts recording every Workload's status changes (see marks).
func (t *tracker) record() {
	t.mu.Lock()
	t.marks = map[string][]rolloutMark{}
	t.mu.Unlock()
}

// stopRecording stops recording and returns what was recorded (nil when nothing was).
func (t *tracker) stopRecording() map[string][]rolloutMark {
	t.mu.Lock()
	defer t.mu.Unlock()
	m := t.marks
	t.marks = nil
	return m
}

// countAt is how many Workloads were last seen at blueprint revision rev.
func (t *tracker) countAt(rev string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	at := 0
	for _, r := range t.revision {
		if r == rev {
			at++
		}
	}
	return at
}
