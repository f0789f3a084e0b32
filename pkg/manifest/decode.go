package manifest

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// scheme knows Surveyor's kinds, which Decode returns typed.
var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		panic(err) // the API package registers its own types; this cannot fail
	}
	return s
}()

// GroupVersionKind is the document's apiVersion and kind.
func (d Document) GroupVersionKind() schema.GroupVersionKind {
	return schema.FromAPIVersionAndKind(d.Node.GetApiVersion(), d.Node.GetKind())
}

// JSON is the document as JSON.
func (d Document) JSON() ([]byte, error) {
	b, err := d.Node.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("%s:%d: %w", d.File, d.Line(), err)
	}
	return b, nil
}

// Decode decodes the document: a kind of carto.run/v1alpha1 into its Go type (such as
// *v1alpha1.Workload), anything else into an *unstructured.Unstructured. An error names
// the document's file and line.
func (d Document) Decode() (v1alpha1.Object, error) {
	b, err := d.JSON()
	if err != nil {
		return nil, err
	}
	gvk := d.GroupVersionKind()
	if gvk.Kind == "" {
		return nil, fmt.Errorf("%s:%d: the document has no kind", d.File, d.Line())
	}
	if gvk.GroupVersion() == v1alpha1.GroupVersion {
		obj, err := scheme.New(gvk)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %s is no kind of %s", d.File, d.Line(), gvk.Kind, v1alpha1.GroupVersion)
		}
		if err := json.Unmarshal(b, obj); err != nil {
			return nil, fmt.Errorf("%s:%d: decoding %s: %w", d.File, d.Line(), gvk.Kind, err)
		}
		return obj.(v1alpha1.Object), nil
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(b); err != nil {
		return nil, fmt.Errorf("%s:%d: decoding %s: %w", d.File, d.Line(), gvk.Kind, err)
	}
	return u, nil
}
