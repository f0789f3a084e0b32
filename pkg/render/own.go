package render

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// own makes a stamped object its owner's, of kind ownerKind: it goes to the owner's
// namespace, carries labels and the owner's shard (over any the template set), has the
// owner as its controller, and records the digest of it all in AnnotationStampDigest.
// Owners and Runnables alike.
func own(obj *unstructured.Unstructured, owner metav1.Object, ownerKind string, labels map[string]string) error {
	obj.SetNamespace(owner.GetNamespace())
	merged := obj.GetLabels()
	if merged == nil {
		merged = map[string]string{}
	}
	for k, v := range labels {
		merged[k] = v
	}
	if shard, ok := owner.GetLabels()[v1alpha1.LabelShardKey]; ok {
		merged[v1alpha1.LabelShardKey] = shard
	} else {
		delete(merged, v1alpha1.LabelShardKey)
	}
	obj.SetLabels(merged)
	obj.SetOwnerReferences([]metav1.OwnerReference{{
		APIVersion: v1alpha1.GroupVersion.String(), Kind: ownerKind,
		Name: owner.GetName(), UID: owner.GetUID(),
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}})
	digest, err := Digest(obj.Object)
	if err != nil {
		return err
	}
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[AnnotationStampDigest] = digest
	obj.SetAnnotations(annotations)
	return nil
}
