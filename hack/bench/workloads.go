package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// workloadName is the i-th benchmark Workload's name.
func workloadName(i int) string { return fmt.Sprintf("w-%05d", i) }

// newWorkload is a Workload with a git source the templates read, labelled for the
// supply chain whose selector value is chain.
func newWorkload(ns, name, chain string) *v1alpha1.Workload {
	return &v1alpha1.Workload{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{chainLabel: chain}},
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

// tracker follows the bench Workloads through one watch (an informer, which resumes
// after a dropped watch without polling): when each first became Ready at its current
// generation, and each one's ResourcesHealthy status for the propagation probe.
type tracker struct {
	mu       sync.Mutex
	want     int
	ready    map[string]time.Time
	healthy  map[string]metav1.ConditionStatus
	waiters  map[*waiter]bool
	allReady chan struct{}
	events   int
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
		waiters: map[*waiter]bool{}, allReady: make(chan struct{}),
	}
}

// run starts the informer on ns and returns once it has synced.
func (t *tracker) run(ctx context.Context, c client.WithWatch, ns string) error {
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			list := &v1alpha1.WorkloadList{}
			err := c.List(ctx, list, &client.ListOptions{Namespace: ns, Raw: &opts})
			return list, err
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return c.Watch(ctx, &v1alpha1.WorkloadList{}, &client.ListOptions{Namespace: ns, Raw: &opts})
		},
	}
	inf := cache.NewSharedIndexInformer(lw, &v1alpha1.Workload{}, 0, cache.Indexers{})
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { t.observe(o.(*v1alpha1.Workload)) },
		UpdateFunc: func(_, o any) { t.observe(o.(*v1alpha1.Workload)) },
	}); err != nil {
		return err
	}
	go inf.RunWithContext(ctx)
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return fmt.Errorf("the Workload watch never synced: %w", ctx.Err())
	}
	return nil
}

// isReady is Ready=True for the Workload's current generation.
func isReady(wl *v1alpha1.Workload) bool {
	c := meta.FindStatusCondition(wl.Status.Conditions, v1alpha1.ConditionReady)
	return c != nil && c.Status == metav1.ConditionTrue && wl.Status.ObservedGeneration == wl.Generation
}

func (t *tracker) observe(wl *v1alpha1.Workload) {
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.events++
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
