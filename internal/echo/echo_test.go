package echo

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func configMap(rv string) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm", ResourceVersion: rv}}
	cm.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
	return cm
}

// countingQueue counts the requests added to it.
type countingQueue struct {
	workqueue.TypedRateLimitingInterface[reconcile.Request]
	added int
}

func (q *countingQueue) Add(reconcile.Request) { q.added++ }

// The watch events of the reconciler's own writes re-queue nothing, whether they arrive
// before the write's answer or after it; every other version passes, and a write that
// failed lets through whatever arrived while it was in flight.
func TestEchoesDropOnlyTheirOwnWrites(t *testing.T) {
	ctx := context.Background()
	enqueue := handler.Funcs{
		CreateFunc: func(_ context.Context, _ event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Name: "owner"}})
		},
		UpdateFunc: func(_ context.Context, _ event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Name: "owner"}})
		},
	}
	writeAs := func(rv string, fail bool, during ...string) func(e *Echoes, h handler.EventHandler, q *countingQueue) {
		return func(e *Echoes, h handler.EventHandler, q *countingQueue) {
			obj := configMap("")
			_ = e.Write(ObjectKey(obj), obj, func() error {
				for _, v := range during {
					h.Update(ctx, event.UpdateEvent{ObjectOld: configMap("0"), ObjectNew: configMap(v)}, q)
				}
				if fail {
					return errors.New("conflict")
				}
				obj.SetResourceVersion(rv)
				return nil
			})
		}
	}
	update := func(rv string) func(e *Echoes, h handler.EventHandler, q *countingQueue) {
		return func(e *Echoes, h handler.EventHandler, q *countingQueue) {
			h.Update(ctx, event.UpdateEvent{ObjectOld: configMap("0"), ObjectNew: configMap(rv)}, q)
		}
	}
	create := func(rv string) func(e *Echoes, h handler.EventHandler, q *countingQueue) {
		return func(e *Echoes, h handler.EventHandler, q *countingQueue) {
			h.Create(ctx, event.CreateEvent{Object: configMap(rv)}, q)
		}
	}
	for _, tc := range []struct {
		name  string
		steps []func(e *Echoes, h handler.EventHandler, q *countingQueue)
		want  int
	}{
		{"the echo after the answer is dropped", steps(writeAs("5", false), update("5")), 0},
		{"a create's echo after the answer is dropped", steps(writeAs("5", false), create("5")), 0},
		{"the echo before the answer is dropped", steps(writeAs("5", false, "5")), 0},
		{"another writer's version before the answer passes", steps(writeAs("6", false, "5")), 1},
		{"another writer's version after the echo passes", steps(writeAs("5", false), update("5"), update("6")), 1},
		{"a resync of the written version passes once the echo was seen", steps(writeAs("5", false), update("5"), update("5")), 1},
		{"a failed write lets held events through", steps(writeAs("", true, "5", "6")), 2},
		{"with no write every event passes", steps(update("5"), create("6")), 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &Echoes{}
			h := e.Handler(ObjectKey, enqueue)
			q := &countingQueue{}
			for _, step := range tc.steps {
				step(e, h, q)
			}
			if q.added != tc.want {
				t.Errorf("re-queued %d times, want %d", q.added, tc.want)
			}
		})
	}
}

func steps(s ...func(e *Echoes, h handler.EventHandler, q *countingQueue)) []func(e *Echoes, h handler.EventHandler, q *countingQueue) {
	return s
}

// A delete forgets a written version whose event never came, so that a new object of
// the same name is not mistaken for it.
func TestEchoesForgetDeletedObjects(t *testing.T) {
	e := &Echoes{}
	obj := configMap("")
	_ = e.Write(ObjectKey(obj), obj, func() error { obj.SetResourceVersion("5"); return nil })
	h := e.Handler(ObjectKey, handler.Funcs{})
	h.Delete(context.Background(), event.DeleteEvent{Object: configMap("5")}, &countingQueue{})
	if e.hold(ObjectKey(obj), "5", func() {}) {
		t.Error("a version of a deleted object was still taken for an echo")
	}
}

// A reconcile that finds the cache behind its own write waits for the write's echo, which
// then re-queues the owner instead of being dropped; an unchanged version is no write.
func TestEchoesAwaitedEchoRequeues(t *testing.T) {
	e := &Echoes{}
	obj := configMap("4")
	_ = e.Write(ObjectKey(obj), obj, func() error { obj.SetResourceVersion("5"); return nil })
	if !e.AwaitEcho(ObjectKey(obj)) {
		t.Fatal("the cache was not known to be behind a write whose echo had not come")
	}
	if e.hold(ObjectKey(obj), "5", func() {}) {
		t.Error("an awaited echo was dropped")
	}
	if e.AwaitEcho(ObjectKey(obj)) {
		t.Error("still waiting after the echo came")
	}
	_ = e.Write(ObjectKey(obj), obj, func() error { return nil }) // the server changed nothing
	if e.AwaitEcho(ObjectKey(obj)) {
		t.Error("waiting for the echo of a write that kept the version")
	}
}
