package echo

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Echoes keeps the watch events of this reconciler's own writes from re-queueing the
// owner. Such an event tells the reconciler nothing it did not know when it wrote: the
// owner's status it computed, or the stamped object the apply returned (health and
// outputs were read from that answer). Filtering them saves a second reconcile per
// owner. Any other write (another writer, a controller updating a Deployment's status,
// the blueprint reconciler pinning a rollout) has a resourceVersion of its own and
// passes.
//
// A write's event can arrive before its response, so events for an object being written
// are held until the write returns: the one with the resourceVersion the write got is
// dropped, the others are let through. A write that failed lets every held event
// through.
//
// Until its echo arrives, the cache holds an older copy of an object just written. A
// reconcile that reads such a copy must not trust it (it would compare its status with
// one already replaced): it waits for the echo, which is then delivered (AwaitEcho).
type Echoes struct {
	mu sync.Mutex
	// writing are the objects being written, with the events that arrived meanwhile.
	writing map[string][]heldEvent
	// written are the versions written whose events have not arrived yet.
	written map[string]writtenVersion
	// awaited are the objects whose echo re-queues after all: a reconcile found the
	// cache behind its own write.
	awaited map[string]bool
}

type writtenVersion struct {
	resourceVersion string
	at              time.Time
}

// Wait bounds how long a written version is expected to show up in the cache; a
// write whose event never comes (a watch that was re-listed past it) is forgotten then.
const Wait = 5 * time.Second

type heldEvent struct {
	resourceVersion string
	deliver         func()
}

// Write makes a write of obj (which it updates from the answer), holding the events of
// obj that arrive meanwhile.
func (e *Echoes) Write(key string, obj client.Object, write func() error) error {
	before := obj.GetResourceVersion()
	e.start(key)
	err := write()
	rv := ""
	if err == nil && obj.GetResourceVersion() != before { // an unchanged version has no event
		rv = obj.GetResourceVersion()
	}
	e.done(key, rv)
	return err
}

// AwaitEcho tells whether a write of key has not reached the cache yet; if so, its echo
// will re-queue instead of being dropped.
func (e *Echoes) AwaitEcho(key string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	w, ok := e.written[key]
	if !ok || time.Since(w.at) > Wait {
		return false
	}
	e.awaited[key] = true
	return true
}

// start marks the object with key as being written.
func (e *Echoes) start(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.writing == nil {
		e.writing, e.written, e.awaited = map[string][]heldEvent{}, map[string]writtenVersion{}, map[string]bool{}
	}
	e.writing[key] = []heldEvent{}
}

// done ends the write of key, which gave resourceVersion ("" when it failed), and
// delivers the held events that were not its echo.
func (e *Echoes) done(key, resourceVersion string) {
	e.mu.Lock()
	held := e.writing[key]
	delete(e.writing, key)
	echoed := false
	var deliver []func()
	for _, ev := range held {
		if resourceVersion != "" && ev.resourceVersion == resourceVersion {
			echoed = true
			continue
		}
		deliver = append(deliver, ev.deliver)
	}
	if resourceVersion != "" && !echoed {
		e.written[key] = writtenVersion{resourceVersion: resourceVersion, at: time.Now()}
	}
	e.mu.Unlock()
	for _, f := range deliver {
		f()
	}
}

// hold tells whether an event for key at resourceVersion is dropped as an echo or held
// until the write in flight returns (deliver is then called if it was not the echo).
func (e *Echoes) hold(key, resourceVersion string, deliver func()) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if held, ok := e.writing[key]; ok {
		e.writing[key] = append(held, heldEvent{resourceVersion: resourceVersion, deliver: deliver})
		return true
	}
	if w, ok := e.written[key]; ok && w.resourceVersion == resourceVersion {
		delete(e.written, key)
		if e.awaited[key] {
			delete(e.awaited, key)
			return false
		}
		return true
	}
	return false
}

// Forget drops what is known of key's writes, as when its object was deleted: no echo
// of it is awaited any more.
func (e *Echoes) Forget(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.written, key)
	delete(e.awaited, key)
}

// Handler wraps next so that the create and update events of this reconciler's writes
// (keyed by keyOf) re-queue nothing.
func (e *Echoes) Handler(keyOf func(client.Object) string, next handler.EventHandler) handler.EventHandler {
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, ev event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if !e.hold(keyOf(ev.Object), ev.Object.GetResourceVersion(), func() { next.Create(ctx, ev, q) }) {
				next.Create(ctx, ev, q)
			}
		},
		UpdateFunc: func(ctx context.Context, ev event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if !e.hold(keyOf(ev.ObjectNew), ev.ObjectNew.GetResourceVersion(), func() { next.Update(ctx, ev, q) }) {
				next.Update(ctx, ev, q)
			}
		},
		DeleteFunc: func(ctx context.Context, ev event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			e.Forget(keyOf(ev.Object))
			next.Delete(ctx, ev, q)
		},
		GenericFunc: next.Generic,
	}
}

// ObjectKey identifies a stamped object across its kinds.
func ObjectKey(obj client.Object) string {
	return StampedKey(obj.GetObjectKind().GroupVersionKind(), obj.GetNamespace(), obj.GetName())
}

// StampedKey is the key ObjectKey gives an object of kind gvk named namespace/name, for
// callers that know the object's identity but hold no copy of it.
func StampedKey(gvk schema.GroupVersionKind, namespace, name string) string {
	return gvk.Group + "/" + gvk.Kind + "/" + namespace + "/" + name
}

// OwnerKey identifies an owner of the reconciler's one kind.
func OwnerKey(obj client.Object) string {
	return obj.GetNamespace() + "/" + obj.GetName()
}
