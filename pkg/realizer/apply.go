package realizer

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/surveyor-dev/surveyor/internal/apierr"
	"github.com/surveyor-dev/surveyor/internal/echo"
	"github.com/surveyor-dev/surveyor/internal/watch"
	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/render"
)

// apply writes the object as the owner's ServiceAccount, unless the live object
// already holds every stamped field, and returns the live object. A condition is
// returned for what the user must fix; an error for what a retry may fix.
func (rz *realization) apply(res *v1alpha1.BlueprintResource, tpl render.Template, obj *unstructured.Unstructured) (*unstructured.Unstructured, *metav1.Condition, error) {
	gvk := obj.GroupVersionKind()
	rejected := func(err error) (*unstructured.Unstructured, *metav1.Condition, error) {
		c := render.Submitted(metav1.ConditionFalse, v1alpha1.ReasonTemplateRejectedByAPIServer,
			"unable to apply object [%s/%s] for resource [%s]: %s", gvk.Kind, obj.GetName(), res.Name, apierr.Message(err))
		if apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err) {
			// Writing to a namespace that exists, only the kind can be missing: its CRD
			// was deleted (or is being deleted) since the mapping was learnt.
			rz.r.watch.Wait(gvk.Group, watch.OwnerRequest(rz.owner))
			err = watch.NotServed(gvk, err)
		}
		var notServed *watch.NotServedError
		switch {
		case errors.As(err, &notServed):
			c = render.Submitted(metav1.ConditionUnknown, v1alpha1.ReasonKindNotServed,
				"unable to apply object [%s/%s] for resource [%s]: %v", gvk.Kind, obj.GetName(), res.Name, notServed)
			return nil, &c, fmt.Errorf("%w: %w", errRetryLater, err)
		case apierrors.IsForbidden(err):
			// RBAC is fixed outside the owner (a RoleBinding is added) and nothing
			// here watches RBAC, so a denial is retried with backoff.
			return nil, &c, fmt.Errorf("%w: %w", errRetryLater, err)
		case apierr.Transient(err):
			c.Status = metav1.ConditionUnknown
			return nil, &c, err
		}
		return nil, &c, nil
	}
	if err := rz.ensure(gvk); err != nil {
		return rejected(err)
	}
	if tpl.Spec.IsImmutable() {
		live, err := rz.createImmutable(res, tpl, obj)
		if err != nil {
			return rejected(err)
		}
		return live, nil, nil
	}
	stored := asStored(obj)
	live, err := rz.r.stamped.Get(rz.ctx, gvk, client.ObjectKeyFromObject(obj))
	switch {
	case err == nil:
		if rz.r.echoes.AwaitEcho(echo.ObjectKey(obj)) {
			// The cached copy predates this reconciler's last write of the object: compared
			// with the stamp it could look edited and be written again. The pass is dropped;
			// the write's event re-queues the owner once the cache has it.
			rz.syncing = true
			return nil, nil, watch.ErrKindSyncing
		}
		if live.GetAnnotations()[render.AnnotationStampDigest] == obj.GetAnnotations()[render.AnnotationStampDigest] && rz.applied(obj, stored, live) {
			return live, nil, nil
		}
		adopted, err := rz.adopt(obj, live)
		if err != nil {
			return rejected(err)
		}
		if adopted != nil {
			rz.events.Add(v1alpha1.EventStampedObjectApplied, "Adopted %s/%s for resource [%s]", gvk.Kind, obj.GetName(), res.Name)
			return adopted, nil, nil
		}
	case !apierrors.IsNotFound(err):
		return rejected(err)
	}
	applied, err := rz.serverSideApply(obj, false)
	if err != nil {
		return rejected(err)
	}
	rz.r.answers.learn(applied, stored)
	rz.events.Add(v1alpha1.EventStampedObjectApplied, "Applied %s/%s for resource [%s]", gvk.Kind, obj.GetName(), res.Name)
	logf.FromContext(rz.ctx).V(1).Info("applied stamped object", "resource", res.Name, "kind", gvk.Kind, "name", obj.GetName())
	return applied, nil, nil
}

// serverSideApply applies obj as the owner's ServiceAccount and returns the object the
// API server answers with. A dry run writes nothing and answers with what the apply would
// store. A kind of Kubernetes' own is answered as protobuf into its
// typed object, then read as unstructured (as the cache's copy is): that costs the client
// less CPU than decoding the JSON answer, its managedFields included (docs/performance.md, "What
// changed (issue 15)"; BenchmarkServerSideApply measures it).
func (rz *realization) serverSideApply(obj *unstructured.Unstructured, dryRun bool) (*unstructured.Unstructured, error) {
	gvk := obj.GroupVersionKind()
	answer := rz.r.stamped.Object(gvk)
	patch := client.Apply
	if u, ok := answer.(*unstructured.Unstructured); ok {
		obj.DeepCopyInto(u)
	} else {
		data, err := obj.MarshalJSON()
		if err != nil {
			return nil, err
		}
		patch = client.RawPatch(types.ApplyPatchType, data)
		answer.SetNamespace(obj.GetNamespace())
		answer.SetName(obj.GetName())
	}
	opts := []client.PatchOption{client.FieldOwner(FieldManager), client.ForceOwnership}
	if dryRun {
		opts = append(opts, client.DryRunAll)
	}
	write := func() error {
		return rz.write(rz.ctx, gvk, func(ctx context.Context) error {
			return rz.client.Patch(ctx, answer, patch, opts...)
		})
	}
	var err error
	if dryRun {
		err = write() // nothing written, no echo
	} else {
		err = rz.r.echoes.Write(echo.ObjectKey(obj), answer, write)
	}
	if err != nil {
		return nil, err
	}
	answer.SetManagedFields(nil) // as the cache holds it: no code reads them
	return watch.AsUnstructured(gvk, answer)
}

func (rz *realization) stampedRef(obj *unstructured.Unstructured) *v1alpha1.StampedRef {
	gvk := obj.GroupVersionKind()
	return &v1alpha1.StampedRef{
		APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName(),
		Resource: rz.r.watch.Resource(gvk),
	}
}

// live reads a stamped object from the cache, or returns nil when it is not there.
func (rz *realization) live(ref *v1alpha1.StampedRef) *unstructured.Unstructured {
	gvk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
	if err := rz.ensure(gvk); err != nil {
		return nil
	}
	obj, err := rz.r.stamped.Get(rz.ctx, gvk, client.ObjectKey{Namespace: rz.owner.GetNamespace(), Name: ref.Name})
	if err != nil {
		return nil
	}
	return obj
}

// asStored is the stamped object as the API server stores it, for comparing with the
// live object: a Secret's write-only stringData is folded into data, base64-encoded.
func asStored(obj *unstructured.Unstructured) *unstructured.Unstructured {
	stringData, ok := obj.Object["stringData"].(map[string]any)
	if !render.IsSecret(obj) || !ok {
		return obj
	}
	stored := obj.DeepCopy()
	data, _ := stored.Object["data"].(map[string]any)
	if data == nil {
		data = map[string]any{}
	}
	for k, v := range stringData {
		if s, ok := v.(string); ok {
			data[k] = base64.StdEncoding.EncodeToString([]byte(s))
		}
	}
	stored.Object["data"] = data
	delete(stored.Object, "stringData")
	return stored
}

// errRetryLater marks a failure the user sees in the status and that a later retry
// may get past without any watched object changing (a denial before a RoleBinding
// exists). The reconcile is re-queued with backoff rather than reported as an error.
var errRetryLater = errors.New("retrying later")
