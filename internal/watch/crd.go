package watch

import (
	"context"
	"errors"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// crdGVK is the kind whose deletion removes the informers of the kinds it defined.
var crdGVK = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}

// errCRDDeleting is why a kind whose CRD is being deleted is not served: writing to
// it would recreate the objects the deletion waits to see gone, and stall it.
var errCRDDeleting = errors.New("its CustomResourceDefinition is being deleted")

// crdChanged handles a change of a CRD, seen through its metadata; gone says it was
// deleted. From the moment a CRD is being deleted its kinds are out of service: their
// informers are removed (left running, they would retry their list until the process
// restarts, and serve a stale cache meanwhile), and the owners of the objects they
// held are re-queued to say so. The owners waiting for a kind of the CRD's group are
// re-queued on every change.
func (w *Watcher) crdChanged(ctx context.Context, crd client.Object, gone bool, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	resource, group, _ := strings.Cut(crd.GetName(), ".")
	gr := schema.GroupResource{Group: group, Resource: resource}
	deleting := crd.GetDeletionTimestamp() != nil && !gone
	w.mu.Lock()
	defer w.mu.Unlock()
	if deleting {
		w.deleting[gr] = true
	} else {
		delete(w.deleting, gr)
	}
	for gvk, kw := range w.kinds {
		if kw.resource != gr || !(deleting || gone) {
			continue
		}
		// An informer that has not synced realized nothing, and reading it would wait
		// for its sync with w.mu held.
		if kw.informer.HasSynced() {
			if objects, err := w.read.List(ctx, gvk); err == nil {
				for _, obj := range objects {
					w.handler.Delete(ctx, event.DeleteEvent{Object: obj}, q)
				}
			}
		}
		w.remove(ctx, gvk, kw)
	}
	for owner := range w.waiting[group] {
		q.Add(owner)
	}
	delete(w.waiting, group)
}

// CRDHandler routes CRD events (metadata only) to crdChanged.
func (w *Watcher) CRDHandler() handler.EventHandler {
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			w.crdChanged(ctx, e.Object, false, q)
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			w.crdChanged(ctx, e.ObjectNew, false, q)
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			w.crdChanged(ctx, e.Object, true, q)
		},
	}
}

// CRDObject is the metadata-only object the CRD watch is keyed by.
func CRDObject() *metav1.PartialObjectMetadata {
	obj := &metav1.PartialObjectMetadata{}
	obj.SetGroupVersionKind(crdGVK)
	return obj
}
