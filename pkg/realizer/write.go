package realizer

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/surveyor-dev/surveyor/internal/apierr"
	"github.com/surveyor-dev/surveyor/internal/watch"
	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/render"
)

// writer is the one way the reconcilers write stamped objects, and finished owners: every
// create, apply, patch and delete goes through write, so through the watcher's per-kind
// timeout and stall backoff (watch.Watcher.Write). A webhook that hangs on one kind's
// deletes then holds a worker for one write timeout, and only while the kind's next try is
// due, never for the reconcile's minute.
type writer struct {
	watch *watch.Watcher
	// owner is the request the watcher re-queues when a write it held back can go.
	owner reconcile.Request
	// client writes: it impersonates the owner's ServiceAccount for stamped objects.
	client client.Client
	// syncing is set when a kind the owner needs has not synced yet, has not answered a
	// write in time while another is in flight (watch.ErrKindSyncing), or its cache is
	// behind this reconciler's last write of an object: the pass is dropped.
	syncing bool
}

// write runs one write of a gvk object, as the watcher lets it.
func (w *writer) write(ctx context.Context, gvk schema.GroupVersionKind, do func(context.Context) error) error {
	err := w.watch.Write(ctx, gvk, w.owner, do)
	if errors.Is(err, watch.ErrKindSyncing) {
		w.syncing = true
	}
	return err
}

// ensure is the watcher's Ensure for the owner: the kind must be namespaced and served,
// and its informer synced.
func (w *writer) ensure(gvk schema.GroupVersionKind) error {
	err := w.watch.Ensure(gvk, w.owner)
	if errors.Is(err, watch.ErrKindSyncing) {
		w.syncing = true
	}
	return err
}

// create creates obj with Surveyor's field manager.
func (w *writer) create(ctx context.Context, obj *unstructured.Unstructured) error {
	return w.write(ctx, obj.GroupVersionKind(), func(ctx context.Context) error {
		return w.client.Create(ctx, obj, client.FieldOwner(FieldManager))
	})
}

// delete deletes obj, its dependents in the background (see gone).
func (w *writer) delete(ctx context.Context, gvk schema.GroupVersionKind, obj client.Object, opts ...client.DeleteOption) error {
	opts = append(opts, client.PropagationPolicy(metav1.DeletePropagationBackground))
	return w.write(ctx, gvk, func(ctx context.Context) error { return w.client.Delete(ctx, obj, opts...) })
}

// errNotControlled is why deleteControlled deleted nothing: the object is not one the
// owner controls, so not the owner's to delete, whatever its status lists.
var errNotControlled = errors.New("the owner does not control the object")

// deleteControlled deletes the gvk object named key if it is in owner's namespace and owner
// is its controller, and answers errNotControlled, deleting nothing, otherwise. The owner's
// status names what prune deletes, and anyone who can write that status can name any
// object there: another team's, one no one stamped, a cluster-scoped one (the client drops
// the namespace of a cluster-scoped kind). The object is read with read, metadata only (a
// Secret's data never enters memory), and that very object is deleted (a UID
// precondition), so one recreated meanwhile by someone else is not. The read and the delete
// are one write (write), bounded by its timeout and the kind's stall backoff. A kind no
// longer served at gvk's version (its CRD dropped the version) is read and deleted at the
// version it is served at: the object is stored once whatever version it is read at.
func (w *writer) deleteControlled(ctx context.Context, read client.Reader, gvk schema.GroupVersionKind, key client.ObjectKey, owner client.Object) error {
	gvk, err := served(w.client.RESTMapper(), gvk)
	if err != nil {
		return err
	}
	return w.write(ctx, gvk, func(ctx context.Context) error {
		live := &metav1.PartialObjectMetadata{}
		live.SetGroupVersionKind(gvk)
		if err := read.Get(ctx, key, live); err != nil {
			return err
		}
		if live.GetNamespace() != owner.GetNamespace() || !metav1.IsControlledBy(live, owner) {
			return errNotControlled
		}
		obj := &unstructured.Unstructured{}
		obj.SetGroupVersionKind(gvk)
		obj.SetNamespace(key.Namespace)
		obj.SetName(key.Name)
		uid := live.GetUID()
		return w.client.Delete(ctx, obj, client.Preconditions{UID: &uid}, client.PropagationPolicy(metav1.DeletePropagationBackground))
	})
}

// served is gvk, or its kind at the version it is served at when gvk's version is not
// served (a CRD dropped it): an object is stored once, whatever version it is read at. A
// kind served at no version is a no-match error: gone, with its CRD.
func served(mapper meta.RESTMapper, gvk schema.GroupVersionKind) (schema.GroupVersionKind, error) {
	if _, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version); !meta.IsNoMatchError(err) {
		return gvk, nil
	}
	mapping, err := mapper.RESTMapping(gvk.GroupKind())
	if err != nil {
		return gvk, err
	}
	return mapping.GroupVersionKind, nil
}

// gone says whether a delete that answered err leaves the object gone: deleted (nil), not
// there (deleted already, and the cache has not heard yet), or of a kind no longer served
// at all.
func gone(err error) bool {
	return err == nil || apierrors.IsNotFound(err) || meta.IsNoMatchError(err)
}

// retain deletes the finished objects beyond policy, oldest first, and returns those left,
// oldest first, and the error of the deletes that failed. verdict is True for a success,
// False for a failure and Unknown for one still running, which is kept; the newest object
// counts but is never deleted. A failed delete is tried again by the next pass, which lists
// the object again: the caller re-queues the owner. removed says what was deleted, failed
// what was not, for the owner's events. Immutable objects and Runnables' runs alike.
func (w *writer) retain(ctx context.Context, objects []*unstructured.Unstructured, policy v1alpha1.RetentionPolicy,
	verdict func(*unstructured.Unstructured) metav1.ConditionStatus, removed func(*unstructured.Unstructured), failed func(*unstructured.Unstructured, error),
) ([]*unstructured.Unstructured, error) {
	verdicts := make([]metav1.ConditionStatus, len(objects))
	for i, o := range objects {
		verdicts[i] = verdict(o)
	}
	var errs []error
	deleted := map[int]bool{}
	for _, i := range render.Expired(verdicts, policy) {
		o := objects[i]
		err := w.delete(ctx, o.GroupVersionKind(), o)
		if !gone(err) {
			failed(o, err)
			errs = append(errs, fmt.Errorf("deleting %s %s beyond the retention policy: %w", o.GetKind(), o.GetName(), err))
			continue
		}
		deleted[i] = true
		if err == nil {
			removed(o)
		}
	}
	kept := make([]*unstructured.Unstructured, 0, len(objects)-len(deleted))
	for i, o := range objects {
		if !deleted[i] {
			kept = append(kept, o)
		}
	}
	return kept, errors.Join(errs...)
}

// refOf names obj, for deleteFailure.
func refOf(obj *unstructured.Unstructured) v1alpha1.StampedRef {
	return v1alpha1.StampedRef{APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

// deleteFailure is what status and events say of a delete of ref that failed: the API
// server's message, except for a Secret, whose delete a webhook may answer by quoting its
// data (DESIGN §12): then only the status reason, and the detail is in the controller log.
func deleteFailure(ref v1alpha1.StampedRef, err error) string {
	msg := apierr.Message(err)
	if ref.Kind == "Secret" && ref.APIVersion == "v1" {
		reason := string(apierrors.ReasonForError(err))
		if reason == "" {
			reason = "failed"
		}
		msg = reason + " (the API server's message about a Secret is in the controller log)"
	}
	return fmt.Sprintf("unable to delete %s/%s: %s", ref.Kind, ref.Name, msg)
}
