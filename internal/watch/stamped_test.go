package watch

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

func TestStampedReaderCachesKubernetesAndSurveyorKindsTyped(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	r := NewStampedReader(nil, scheme)
	for _, tc := range []struct {
		gvk   schema.GroupVersionKind
		typed bool
	}{
		{schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, true},
		{schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, true},
		{schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"}, true},
		// A CRD's kind: client-go's scheme does not hold it.
		{schema.GroupVersionKind{Group: "serving.knative.dev", Version: "v1", Kind: "Service"}, false},
		// Surveyor's own (a supply chain may stamp a Deliverable or a Runnable): the
		// manager caches them typed, whole, already.
		{v1alpha1.GroupVersion.WithKind("Deliverable"), true},
		{v1alpha1.GroupVersion.WithKind("Runnable"), true},
		// A version client-go does not have.
		{schema.GroupVersionKind{Group: "apps", Version: "v9", Kind: "Deployment"}, false},
	} {
		obj := r.Object(tc.gvk)
		u, isUnstructured := obj.(*unstructured.Unstructured)
		if isUnstructured == tc.typed {
			t.Errorf("%s: cached as %T, want typed %v", tc.gvk, obj, tc.typed)
		}
		if isUnstructured && u.GroupVersionKind() != tc.gvk {
			t.Errorf("%s: unstructured object of kind %s", tc.gvk, u.GroupVersionKind())
		}
	}
}
