package watch

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// readTimeout bounds a read of the cache, which waits for a kind's sync: Ensure has seen
// it synced, unless the kind's CRD went away in between.
const readTimeout = 3 * time.Second

// StampedReader reads stamped objects from the label-filtered informer cache, as
// unstructured objects, waiting at most readTimeout: the cache blocks a read of a kind
// whose informer has not synced, which Ensure rules out unless the kind's CRD went away
// in between.
//
// Kubernetes' own kinds (ConfigMaps, Services, Deployments, Jobs...) are cached typed,
// so they are listed and watched as protobuf, and a typed object takes much less memory
// than an unstructured one (docs/performance.md, "What changed (issue 15)"); the stamped objects are
// most of the cache. A read converts the cached copy. Every other kind is cached unstructured.
type StampedReader struct {
	cache client.Reader
	// typed are the kinds cached typed: client-go's, when the manager's scheme has them.
	typed *runtime.Scheme
}

// NewStampedReader reads stamped objects from c, a cache whose typed kinds are those of
// scheme.
func NewStampedReader(c client.Reader, scheme *runtime.Scheme) StampedReader {
	return StampedReader{cache: c, typed: scheme}
}

// Object is an empty object of the type the cache holds gvk in. Surveyor's own kinds (a
// supply chain stamps Runnables) are cached typed and whole by the manager already: read
// unstructured, they would get a second informer of the same objects.
func (r StampedReader) Object(gvk schema.GroupVersionKind) client.Object {
	if clientgoscheme.Scheme.Recognizes(gvk) || gvk.Group == v1alpha1.GroupName {
		if obj, err := r.typed.New(gvk); err == nil {
			if o, ok := obj.(client.Object); ok {
				return o
			}
		}
	}
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	return obj
}

// Get reads the gvk object at key.
func (r StampedReader) Get(ctx context.Context, gvk schema.GroupVersionKind, key client.ObjectKey) (*unstructured.Unstructured, error) {
	ctx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	obj := r.Object(gvk)
	if err := r.cache.Get(ctx, key, obj); err != nil {
		return nil, err
	}
	return AsUnstructured(gvk, obj)
}

// List reads the gvk objects that match opts.
func (r StampedReader) List(ctx context.Context, gvk schema.GroupVersionKind, opts ...client.ListOption) ([]*unstructured.Unstructured, error) {
	ctx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	listGVK := gvk.GroupVersion().WithKind(gvk.Kind + "List")
	var list client.ObjectList
	if _, ok := r.Object(gvk).(*unstructured.Unstructured); ok {
		u := &unstructured.UnstructuredList{}
		u.SetGroupVersionKind(listGVK)
		list = u
	} else if l, err := r.typed.New(listGVK); err == nil {
		list, _ = l.(client.ObjectList)
	}
	if list == nil {
		return nil, fmt.Errorf("no list type for %s", gvk)
	}
	if err := r.cache.List(ctx, list, opts...); err != nil {
		return nil, err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	objects := make([]*unstructured.Unstructured, 0, len(items))
	for _, item := range items {
		u, err := AsUnstructured(gvk, item)
		if err != nil {
			return nil, err
		}
		objects = append(objects, u)
	}
	return objects, nil
}

// AsUnstructured is obj, a copy the caller owns, as an unstructured gvk object.
func AsUnstructured(gvk schema.GroupVersionKind, obj runtime.Object) (*unstructured.Unstructured, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return u, nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(gvk) // the cache's typed objects carry no kind
	return u, nil
}
