package realizer

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// errNotStampable marks a kind no template may stamp (a cluster-scoped one): only the
// template can fix that, so it is not retried.
var errNotStampable = errors.New("not stampable")

// watcher adds an informer for each stamped kind the first time it is used. The
// informers see only objects carrying Surveyor's labels (the cache's default label
// selector), so objects Surveyor did not stamp never enter memory. Events go to the
// object's controller owner.
type watcher struct {
	cache   cache.Cache
	mapper  meta.RESTMapper
	handler handler.EventHandler

	mu         sync.Mutex
	controller controller.Controller
	watched    map[schema.GroupVersionKind]bool
}

// ensure makes sure gvk is served and watched, and returns its REST mapping.
func (w *watcher) ensure(ctx context.Context, gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	mapping, err := w.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, err
	}
	if mapping.Scope.Name() != meta.RESTScopeNameNamespace {
		return nil, fmt.Errorf("%w: %s is cluster-scoped: a template must stamp a namespaced kind", errNotStampable, gvk.Kind)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.watched[gvk] {
		return mapping, nil
	}
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	if err := w.controller.Watch(source.Kind[client.Object](w.cache, obj, w.handler)); err != nil {
		return nil, fmt.Errorf("watching %s: %w", gvk, err)
	}
	// Block until the informer has synced so the next read from the cache is
	// authoritative (a miss really means the object does not exist).
	if _, err := w.cache.GetInformer(ctx, obj); err != nil {
		return nil, fmt.Errorf("starting an informer for %s: %w", gvk, err)
	}
	w.watched[gvk] = true
	return mapping, nil
}
