package realizer

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/csaupgrade"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/internal/echo"
	"github.com/surveyor-dev/surveyor/internal/watch"
	"github.com/surveyor-dev/surveyor/pkg/render"
)

// CartographerFieldManager is the field manager of Cartographer's writes. It creates
// stamped objects and updates them with merge patches, naming no manager, so the API
// server names it after the program in its user agent.
const CartographerFieldManager = "cartographer"

// adopt takes over an object another controller stamped (Cartographer, DESIGN §13): one
// write moves the fields the adopted managers own (their Update operations) to Surveyor's
// apply manager, so that a field later dropped from the template is removed rather than
// kept for them. When the live object already holds every stamped field (or what the API
// server makes of it: answers.go), the same write marks it with the stamp's digest, and adopt returns the object: it is stamped. Otherwise
// it returns nil, and the apply that follows changes what differs. It writes nothing when
// the object carries a digest already (Surveyor applied it) or no adopted manager owns
// any of its fields.
func (rz *realization) adopt(obj, live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if len(rz.r.adopt) == 0 {
		return nil, nil
	}
	if _, stamped := live.GetAnnotations()[render.AnnotationStampDigest]; stamped {
		return nil, nil
	}
	gvk := obj.GroupVersionKind()
	current := &metav1.PartialObjectMetadata{}
	current.SetGroupVersionKind(gvk)
	if err := rz.r.live.Get(rz.ctx, client.ObjectKeyFromObject(obj), current); err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(current.ManagedFields, func(e metav1.ManagedFieldsEntry) bool {
		return rz.r.adopt.Has(e.Manager) && e.Operation == metav1.ManagedFieldsOperationUpdate && e.Subresource == ""
	}) {
		return nil, nil
	}
	if err := csaupgrade.UpgradeManagedFields(current, rz.r.adopt, FieldManager); err != nil {
		return nil, err
	}
	ops := []map[string]any{
		{"op": "replace", "path": "/metadata/managedFields", "value": current.ManagedFields},
		// As csaupgrade does: a change since the read fails with a conflict.
		{"op": "replace", "path": "/metadata/resourceVersion", "value": current.ResourceVersion},
	}
	want := asStored(obj).DeepCopy()
	unstructured.RemoveNestedField(want.Object, "metadata", "annotations", render.AnnotationStampDigest)
	holds := rz.applied(obj, want, live)
	digest := obj.GetAnnotations()[render.AnnotationStampDigest]
	switch {
	case !holds:
	case current.Annotations == nil:
		ops = append(ops, map[string]any{"op": "add", "path": "/metadata/annotations", "value": map[string]string{render.AnnotationStampDigest: digest}})
	default:
		ops = append(ops, map[string]any{"op": "add", "path": "/metadata/annotations/" + jsonPointerEscape(render.AnnotationStampDigest), "value": digest})
	}
	patch, err := json.Marshal(ops)
	if err != nil {
		return nil, err
	}
	answer := &unstructured.Unstructured{}
	answer.SetGroupVersionKind(gvk)
	answer.SetNamespace(obj.GetNamespace())
	answer.SetName(obj.GetName())
	err = rz.r.echoes.Write(echo.ObjectKey(obj), answer, func() error {
		return rz.write(rz.ctx, gvk, func(ctx context.Context) error {
			return rz.client.Patch(ctx, answer, client.RawPatch(types.JSONPatchType, patch), client.FieldOwner(FieldManager))
		})
	})
	if err != nil {
		return nil, err
	}
	if !holds {
		return nil, nil
	}
	answer.SetManagedFields(nil) // as the cache holds it
	return watch.AsUnstructured(gvk, answer)
}

// jsonPointerEscape escapes a key for a JSON pointer (RFC 6901).
func jsonPointerEscape(key string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(key)
}
