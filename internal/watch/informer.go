package watch

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/surveyor-dev/surveyor/internal/apierr"
	"github.com/surveyor-dev/surveyor/internal/echo"
)

// probeAfter is how long a new informer may list before the API server is asked whether
// the kind lists at all. A kind that is served lists in milliseconds; one whose conversion
// webhook or APIService hangs never does. No reconcile waits for either: the owners that
// need the kind are re-queued when its informer syncs, or when the probe finds it not
// served. The probe, one request of one object, is bounded by the same delay.
const probeAfter = 3 * time.Second

// maxProbeInterval is the longest wait between two probes of a kind that still does not
// sync: probes of a kind that stays down back off to it.
const maxProbeInterval = time.Minute

// kindWatch is one stamped kind's informer.
type kindWatch struct {
	informer cache.Informer
	mapping  *meta.RESTMapping
	resource schema.GroupResource // e.g. widgets.example.com, the name of its CRD
	// removed is closed when the informer is removed; it ends awaitSync.
	removed chan struct{}

	// Guarded by Watcher.mu:
	// waiters are the owners waiting for the first sync.
	waiters map[reconcile.Request]bool
	// notServed is the API server's answer to the last probe, while it failed.
	notServed error
	// stalled is a write to the kind that timed out, until one is answered in time;
	// retryAt is when the next write may try (see beginWrite).
	stalled error
	retryAt time.Time
	backoff time.Duration
	// proven says a write to the kind was answered in time since the informer started or
	// the last stall; until then one write at a time is let through (see beginWrite).
	proven   bool
	inflight int
}

// synced is gvk's informer once it has synced, nil before: the mapping it was started
// with holds while it runs (a CRD's deletion removes it), so the RESTMapper, which
// costs tens of microseconds a call, is asked once per kind.
func (w *Watcher) synced(gvk schema.GroupVersionKind) *kindWatch {
	w.mu.Lock()
	kw := w.kinds[gvk]
	deleting := kw != nil && w.deleting[kw.resource]
	w.mu.Unlock()
	if kw == nil || deleting || !kw.informer.HasSynced() {
		return nil
	}
	return kw
}

// Ensure makes sure gvk is served and its informer has synced, without waiting. A kind whose informer is still listing gives ErrKindSyncing,
// and owner is re-queued when it syncs or is found not served. A kind that is not served
// gives a *NotServedError, and owner is re-queued when it syncs or when a CRD of the
// kind's group changes.
func (w *Watcher) Ensure(gvk schema.GroupVersionKind, owner reconcile.Request) error {
	if w.synced(gvk) != nil {
		return nil
	}
	mapping, err := w.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		w.Wait(gvk.Group, owner)
		if errors.As(err, new(*apiutil.ErrResourceDiscoveryFailed)) { // e.g. its APIService is down
			return &NotServedError{gvk: gvk, err: err}
		}
		return err
	}
	if mapping.Scope.Name() != meta.RESTScopeNameNamespace {
		return fmt.Errorf("%w: %s is cluster-scoped: a template must stamp a namespaced kind", apierr.ErrNotStampable, gvk.Kind)
	}
	kw, err := w.informer(gvk, mapping)
	if errors.Is(err, errCRDDeleting) {
		w.Wait(gvk.Group, owner)
		return &NotServedError{gvk: gvk, err: err}
	}
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	// Checked with w.mu held: awaitSync re-queues, with w.mu held, every waiter added
	// before it saw the sync.
	if kw.informer.HasSynced() {
		return nil
	}
	if kw.waiters == nil {
		kw.waiters = map[reconcile.Request]bool{}
	}
	kw.waiters[owner] = true
	if kw.notServed != nil {
		return &NotServedError{gvk: gvk, err: kw.notServed}
	}
	return ErrKindSyncing
}

// informer returns gvk's informer, starting it (without waiting for it to sync) and
// routing its events to the controller on first use.
func (w *Watcher) informer(gvk schema.GroupVersionKind, mapping *meta.RESTMapping) (*kindWatch, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.deleting[mapping.Resource.GroupResource()] {
		return nil, errCRDDeleting
	}
	if kw, ok := w.kinds[gvk]; ok {
		return kw, nil
	}
	informer, err := w.cache.GetInformer(w.life, w.read.Object(gvk), cache.BlockUntilSynced(false))
	if err != nil {
		return nil, fmt.Errorf("starting an informer for %s: %w", gvk, err)
	}
	// Typed objects from the cache carry no kind, so their key is made from gvk.
	keyOf := func(obj client.Object) string { return echo.StampedKey(gvk, obj.GetNamespace(), obj.GetName()) }
	if err := w.controller.Watch(&source.Informer{Informer: informer, Handler: w.echoes.Handler(keyOf, w.handler)}); err != nil {
		return nil, fmt.Errorf("watching %s: %w", gvk, err)
	}
	kw := &kindWatch{informer: informer, mapping: mapping, resource: mapping.Resource.GroupResource(), removed: make(chan struct{})}
	w.kinds[gvk] = kw
	go w.awaitSync(gvk, kw)
	return kw, nil
}

// awaitSync waits for kw's first sync, re-queues the owners waiting for it, and returns.
// While the kind does not sync, the API server is asked why every probeAfter, backing off
// to maxProbeInterval: when a probe fails the kind is not served, and its waiting owners
// are re-queued to report it (a later reconcile reads kw.notServed without waiting); when
// it succeeds the kind has many objects and is still listing, and its owners wait.
func (w *Watcher) awaitSync(gvk schema.GroupVersionKind, kw *kindWatch) {
	ctx, cancel := context.WithCancel(w.life)
	defer cancel()
	go func() {
		select {
		case <-kw.removed:
			cancel()
		case <-ctx.Done():
		}
	}()
	for interval := probeAfter; ; interval = min(2*interval, maxProbeInterval) {
		waitCtx, done := context.WithTimeout(ctx, interval)
		synced := toolscache.WaitForCacheSync(waitCtx.Done(), kw.informer.HasSynced)
		done()
		if ctx.Err() != nil {
			return // removed, or the controller stopped
		}
		var notServed error
		if !synced {
			notServed = w.listError(ctx, gvk)
		}
		w.mu.Lock()
		// Re-queued: every owner once the kind syncs, and once when it is found not served.
		requeue := synced || (notServed != nil && kw.notServed == nil)
		kw.notServed = notServed
		var waiters map[reconcile.Request]bool
		if requeue {
			waiters, kw.waiters = kw.waiters, nil
		}
		w.mu.Unlock()
		for owner := range waiters {
			w.queue.Add(owner)
		}
		if synced {
			return
		}
	}
}

// remove stops gvk's informer kw if it is still the current one; w.mu is held.
func (w *Watcher) remove(ctx context.Context, gvk schema.GroupVersionKind, kw *kindWatch) {
	if w.kinds[gvk] != kw {
		return
	}
	if err := w.cache.RemoveInformer(ctx, w.read.Object(gvk)); err == nil {
		delete(w.kinds, gvk)
		close(kw.removed)
		// Its waiting owners are re-queued: the kind is gone, which they now report.
		for owner := range kw.waiters {
			w.queue.Add(owner)
		}
	}
}

// listError is the API server's answer to a list of one gvk object, nil if it lists: an
// informer retries its list in the background and keeps the error to itself. The object
// is read whole, as the informer reads it: a kind whose conversion webhook hangs may still
// answer a list of metadata.
func (w *Watcher) listError(ctx context.Context, gvk schema.GroupVersionKind) error {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	probeCtx, cancel := context.WithTimeout(ctx, probeAfter)
	defer cancel()
	return w.probe.List(probeCtx, list, client.Limit(1))
}
