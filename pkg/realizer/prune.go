package realizer

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/surveyor-dev/surveyor/internal/apierr"
	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/render"
)

// waitingForSubmission is a pending deletion's message while the pass that found it was
// not clean: a failed apply must not cost an object (the resource that replaces this one
// may be the one that failed), so nothing is deleted until every resource is submitted.
const waitingForSubmission = "waiting for every resource to be submitted before deleting it"

// maxPendingMessage bounds a pending deletion's message, in bytes. A webhook may answer a
// delete at any length, and many deletions may pend at once (a blueprint that drops 50
// resources, one that stamps a new name each generation while deletes fail): cut only at
// the condition limit (32 KiB), 50 of them would push the owner's status past what the API
// server stores (1.5 MiB), and it would never be written again. The log has the whole answer.
const maxPendingMessage = 1024

// pendingMessage is msg cut to maxPendingMessage at a rune boundary, with a marker.
func pendingMessage(msg string) string {
	if len(msg) <= maxPendingMessage {
		return msg
	}
	const ellipsis = "..."
	cut := maxPendingMessage - len(ellipsis)
	for cut > 0 && msg[cut]&0xC0 == 0x80 {
		cut--
	}
	return msg[:cut] + ellipsis
}

// prune deletes the objects stamped earlier that the owner stamps no longer: those of the
// previous status' resources that are gone from the blueprint or stamp another object now,
// and the previous pending deletions. It deletes only after a clean pass (clean), and
// returns the objects still awaiting deletion, which the status lists until a delete
// succeeds or the object is gone (so the cluster keeps nothing the owner forgot), and an
// error when a delete failed. A failure is a Warning event when it is new or its message
// changed: the status holds it meanwhile, and a retry does not repeat it.
func (rz *realization) prune(results []*render.Result, clean bool) ([]v1alpha1.PendingDeletion, error) {
	var current []v1alpha1.StampedRef
	retained := map[string]v1alpha1.StampedRef{} // an immutable resource's newest object, by resource
	for _, res := range results {
		if ref := res.Status.StampedRef; ref != nil {
			current = append(current, *ref)
			if res.Object != nil && res.Template.Spec.IsImmutable() {
				retained[res.Status.Name] = *ref
			}
		}
	}
	stamped := func(resource string, ref v1alpha1.StampedRef) bool {
		for _, c := range current {
			if sameObject(c, ref) {
				return true
			}
		}
		// An immutable resource's older objects of its kind are its retention policy's
		// to delete.
		newest, ok := retained[resource]
		return ok && sameKind(newest, ref)
	}
	var candidates []v1alpha1.PendingDeletion
	add := func(p v1alpha1.PendingDeletion) {
		for _, c := range candidates {
			if sameObject(c.StampedRef, p.StampedRef) {
				return
			}
		}
		if !stamped(p.Resource, p.StampedRef) {
			candidates = append(candidates, p)
		}
	}
	for _, p := range rz.pending {
		add(p)
	}
	now := rz.r.now()
	for _, prev := range rz.prev {
		if prev.StampedRef != nil {
			add(v1alpha1.PendingDeletion{Resource: prev.Name, StampedRef: *prev.StampedRef, Since: now})
		}
	}

	// stampsKind says whether the resource stamps an object of ref's kind now.
	stampsKind := func(resource string, ref v1alpha1.StampedRef) bool {
		return slices.ContainsFunc(results, func(res *render.Result) bool {
			return res.Status.Name == resource && res.Status.StampedRef != nil && sameKind(*res.Status.StampedRef, ref)
		})
	}
	listed := map[string]bool{} // resource and kind whose objects were listed
	var pending []v1alpha1.PendingDeletion
	var errs []error
	for i := 0; i < len(candidates); i++ { // candidates grows with the objects listed
		p := candidates[i]
		if !clean {
			if p.Message == "" {
				p.Message = waitingForSubmission
			}
			pending = append(pending, p)
			continue
		}
		ref := p.StampedRef
		if key := p.Resource + "/" + schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind).GroupKind().String(); !listed[key] && !stampsKind(p.Resource, ref) {
			// Status names a resource's newest object alone: an immutable resource's older
			// ones, kept by its retention policy, are its too, and no retention runs for
			// them once it stamps this kind no more. So the resource's every object of the
			// kind is found by its labels, and goes.
			objects, err := rz.resourceObjects(p.Resource, ref)
			if err != nil {
				// Kept, so the objects are listed again on the next pass.
				p.Message = pendingMessage(fmt.Sprintf("unable to list the %s objects of resource [%s]: %s", ref.Kind, p.Resource, apierr.Message(err)))
				pending = append(pending, p)
				errs = append(errs, fmt.Errorf("listing the %s objects of resource [%s]: %w", ref.Kind, p.Resource, err))
				continue
			}
			listed[key] = true
			for _, o := range objects {
				add(v1alpha1.PendingDeletion{Resource: p.Resource, StampedRef: o, Since: now})
			}
		}
		gvk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
		err := rz.deleteControlled(rz.ctx, rz.r.live, gvk, client.ObjectKey{Namespace: rz.owner.GetNamespace(), Name: ref.Name}, rz.owner)
		if errors.Is(err, errNotControlled) {
			// Not the owner's: its status named it, but the owner did not stamp it (or no
			// longer controls it). Nothing is deleted, and nothing is left to remember.
			logf.FromContext(rz.ctx).Info("not pruning an object the owner does not control", "resource", p.Resource, "kind", ref.Kind, "name", ref.Name)
			continue
		}
		if gone(err) {
			if err == nil {
				rz.events.Add(v1alpha1.EventStampedObjectRemoved, "Removed %s/%s of resource [%s]", ref.Kind, ref.Name, p.Resource)
			}
			continue
		}
		logf.FromContext(rz.ctx).Info("pruning a stamped object failed; it stays in status.pendingDeletions", "resource", p.Resource, "kind", ref.Kind, "name", ref.Name, "error", err.Error())
		msg := pendingMessage(deleteFailure(ref, err))
		if msg != p.Message {
			rz.events.Warn(v1alpha1.EventStampedObjectRemovalFailed, "Pruning resource [%s]: %s", p.Resource, msg)
		}
		p.Message = msg
		pending = append(pending, p)
		errs = append(errs, fmt.Errorf("pruning %s %s of resource [%s]: %w", ref.Kind, ref.Name, p.Resource, err))
	}
	return pending, errors.Join(errs...)
}

// resourceObjects are the objects of ref's kind in the owner's namespace that the owner
// controls and that are labelled as stamped for resource, read with the controller's reader
// (metadata only) in one write (writer.write: its timeout and the kind's stall backoff).
func (rz *realization) resourceObjects(resource string, ref v1alpha1.StampedRef) ([]v1alpha1.StampedRef, error) {
	gvk, err := served(rz.client.RESTMapper(), schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind))
	if meta.IsNoMatchError(err) {
		return nil, nil // gone, with its CRD
	}
	if err != nil {
		return nil, err
	}
	var resourceName string
	if mapping, err := rz.client.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version); err == nil {
		resourceName = mapping.Resource.GroupResource().String()
	}
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	// Through the writer, as the delete that follows: a kind whose (conversion) webhook
	// hangs costs one timeout, then waits out its stall backoff.
	err = rz.write(rz.ctx, gvk, func(ctx context.Context) error {
		return rz.r.live.List(ctx, list, client.InNamespace(rz.owner.GetNamespace()), client.MatchingLabels{
			rz.r.kind.Labels.Name: rz.owner.GetName(), rz.r.kind.Labels.Namespace: rz.owner.GetNamespace(), v1alpha1.LabelResourceName: resource,
		})
	})
	if meta.IsNoMatchError(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var refs []v1alpha1.StampedRef
	for i := range list.Items {
		if o := &list.Items[i]; metav1.IsControlledBy(o, rz.owner) {
			refs = append(refs, v1alpha1.StampedRef{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Namespace: o.Namespace, Name: o.Name, Resource: resourceName})
		}
	}
	return refs, nil
}

// sameObject says whether a and b name one object: its version aside, as the API server
// stores an object once whatever version it is read at.
func sameObject(a, b v1alpha1.StampedRef) bool {
	return sameKind(a, b) && a.Name == b.Name
}

// sameKind says whether a and b are objects of one kind, at any version.
func sameKind(a, b v1alpha1.StampedRef) bool {
	return schema.FromAPIVersionAndKind(a.APIVersion, a.Kind).GroupKind() == schema.FromAPIVersionAndKind(b.APIVersion, b.Kind).GroupKind()
}
