package harness

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Watch calls observe with every state of the objects of obj's kind that opts selects, and
// the state it replaces (nil for an object seen for the first time), from the first list
// until ctx ends or stop is called, in the order the API server's watch delivers them. Its
// informer relists and carries on when the API server comes back. Watch returns once the
// first list was delivered; stop returns once the informer has ended.
func (e *Env) Watch(ctx context.Context, opts cache.Options, obj client.Object, observe func(old, cur client.Object)) (stop func(), err error) {
	opts.Scheme = e.Scheme
	c, err := cache.New(e.Cluster.Config, opts)
	if err != nil {
		return nil, err
	}
	informer, err := c.GetInformer(ctx, obj, cache.BlockUntilSynced(false))
	if err != nil {
		return nil, err
	}
	if _, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { observe(nil, o.(client.Object)) },
		UpdateFunc: func(old, o any) { observe(old.(client.Object), o.(client.Object)) },
	}); err != nil {
		return nil, err
	}
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = c.Start(cctx)
	}()
	stop = func() { cancel(); <-done }
	if !c.WaitForCacheSync(cctx) {
		stop()
		return nil, fmt.Errorf("the %T informer never synced: %w", obj, ctx.Err())
	}
	return stop, nil
}

// InNamespace selects the objects of one namespace, for Watch and Record.
func InNamespace(ns string) cache.Options {
	return cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}}
}

// Observed is one state of an object as the watch delivered it, and when.
type Observed[T client.Object] struct {
	At     time.Time
	Object T
}

// History is every state of the objects one watch selects, in the order the watch
// delivered them (Record). One watch delivers the changes of one namespace, or of one
// object, in resourceVersion order, so replaying a History visits every state the API
// server went through; after a relist an object may come again at a resourceVersion
// already seen. The objects are the informer's own: read them, never change them.
type History[T client.Object] struct {
	mu  sync.Mutex
	log []Observed[T]
}

// Record starts a History of the objects of obj's kind that opts selects (InNamespace, or
// a field selector in opts.ByObject), from their first list until the test ends.
func Record[T client.Object](ctx context.Context, t testing.TB, e *Env, obj T, opts cache.Options) *History[T] {
	t.Helper()
	h := &History[T]{}
	stop, err := e.Watch(ctx, opts, obj, func(_, cur client.Object) {
		o, ok := cur.(T)
		if !ok {
			return
		}
		now := time.Now()
		h.mu.Lock()
		defer h.mu.Unlock()
		h.log = append(h.log, Observed[T]{At: now, Object: o})
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return h
}

// States is every state recorded so far, oldest first.
func (h *History[T]) States() []Observed[T] {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Observed[T](nil), h.log...)
}
