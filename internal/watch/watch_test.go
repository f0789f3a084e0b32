package watch

import (
	"context"
	"errors"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// A kind's writes, as the Watcher lets them go: one at a time until one is answered in
// time; a timeout stalls the kind, so that its owners report it at once instead of each
// holding a worker; after the backoff one write tries again, and an answer ends the stall.
// Owners turned away are re-queued when the write in flight ends.
func TestKindWrites(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Gizmo"}
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	kw := &kindWatch{}
	w := &Watcher{kinds: map[schema.GroupVersionKind]*kindWatch{gvk: kw}, queue: q}
	owner := func(name string) reconcile.Request {
		return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: name}}
	}

	if err := w.beginWrite(gvk, owner("a")); err != nil {
		t.Fatalf("first write to a new kind: %v, want it let go", err)
	}
	if err := w.beginWrite(gvk, owner("b")); !errors.Is(err, ErrKindSyncing) {
		t.Fatalf("second write while the first is in flight: %v, want ErrKindSyncing", err)
	}
	w.written(gvk, context.DeadlineExceeded)
	if q.Len() != 1 {
		t.Fatalf("%d owners re-queued after the write in flight ended, want 1 (b)", q.Len())
	}
	var notServed *NotServedError
	if err := w.beginWrite(gvk, owner("b")); !errors.As(err, &notServed) {
		t.Fatalf("write after a timeout: %v, want the kind not served", err)
	}
	if kw.backoff != minStallBackoff {
		t.Fatalf("backoff %s after one timeout, want %s", kw.backoff, minStallBackoff)
	}

	kw.retryAt = time.Now().Add(-time.Second) // the backoff has passed
	if err := w.beginWrite(gvk, owner("c")); err != nil {
		t.Fatalf("first write after the backoff: %v, want it let go", err)
	}
	if err := w.beginWrite(gvk, owner("d")); !errors.As(err, &notServed) {
		t.Fatalf("second write after the backoff, while the first tries: %v, want the kind not served", err)
	}
	w.written(gvk, apierrors.NewTimeoutError("webhook", 30))
	if kw.backoff != 2*minStallBackoff {
		t.Fatalf("backoff %s after two timeouts, want %s", kw.backoff, 2*minStallBackoff)
	}

	kw.retryAt = time.Now().Add(-time.Second)
	if err := w.beginWrite(gvk, owner("d")); err != nil {
		t.Fatal(err)
	}
	// A rejection is an answer in time: the kind's webhooks work again.
	w.written(gvk, apierrors.NewBadRequest("invalid"))
	if kw.stalled != nil || !kw.proven || kw.backoff != 0 {
		t.Fatalf("after an answer in time: stalled %v, proven %t, backoff %s; want no stall, proven, no backoff", kw.stalled, kw.proven, kw.backoff)
	}
	for _, name := range []string{"e", "f"} {
		if err := w.beginWrite(gvk, owner(name)); err != nil {
			t.Fatalf("write %s to a proven kind: %v, want it let go alongside others", name, err)
		}
	}
	if kw.inflight != 2 {
		t.Fatalf("%d writes in flight, want 2", kw.inflight)
	}
}

// TestForget: a gone owner waits for nothing any more, neither a kind's group to be served
// nor a kind's first sync, so nothing grows with the owners that no longer exist.
func TestForget(t *testing.T) {
	gone := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "apps", Name: "gone"}}
	other := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "apps", Name: "other"}}
	gizmo := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Gizmo"}
	w := &Watcher{
		waiting: map[string]map[reconcile.Request]bool{"example.com": {gone: true}, "other.com": {gone: true, other: true}},
		kinds:   map[schema.GroupVersionKind]*kindWatch{gizmo: {waiters: map[reconcile.Request]bool{gone: true}}},
	}
	w.Forget(gone)
	if len(w.waiting) != 1 || len(w.waiting["other.com"]) != 1 || !w.waiting["other.com"][other] || len(w.kinds[gizmo].waiters) != 0 {
		t.Errorf("after Forget: waiting %v, waiters %v; want only the other owner", w.waiting, w.kinds[gizmo].waiters)
	}
}
