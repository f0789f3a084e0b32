package watch

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// Selected re-queues the Runnables whose selector can choose an object when that object
// changes (DESIGN §11: a selected object's change is realized at once). It watches each
// selected kind, started on first use, by metadata alone and in a cache of its own: a
// selected object is anyone's, so the stamped kinds' label filter does not apply, and
// nothing reads it from this cache (a Runnable lists what it selects as its
// ServiceAccount, live). The cache keeps an object's identity and labels only (Slim), a
// few hundred bytes whatever its size, and no reconcile waits for an informer to sync.
type Selected struct {
	cache  cache.Cache
	mapper meta.RESTMapper
	// requests are the Runnables to re-queue when obj, of kind gvk, changed.
	requests func(ctx context.Context, gvk schema.GroupVersionKind, obj client.Object) []reconcile.Request

	mu         sync.Mutex
	controller controller.Controller
	life       context.Context
	// kinds are the kinds watched, with their resources.
	kinds map[schema.GroupVersionKind]schema.GroupResource
}

// NewSelected watches selected kinds in c, which should cache with the Slim transform and
// no label selector, re-queueing what requests says.
func NewSelected(c cache.Cache, mapper meta.RESTMapper, requests func(context.Context, schema.GroupVersionKind, client.Object) []reconcile.Request) *Selected {
	return &Selected{cache: c, mapper: mapper, requests: requests, kinds: map[schema.GroupVersionKind]schema.GroupResource{}}
}

// SetController is the controller the informers feed; set it once it is built.
func (s *Selected) SetController(c controller.Controller) { s.controller = c }

// Start records the controller's lifetime; it is a source of the controller (source.Func).
func (s *Selected) Start(ctx context.Context, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.life = ctx
	return nil
}

// Ensure watches gvk, starting its informer without waiting for it to sync on first use.
func (s *Selected) Ensure(gvk schema.GroupVersionKind) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.kinds[gvk]; ok {
		return nil
	}
	mapping, err := s.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return err
	}
	informer, err := s.cache.GetInformer(s.life, metadataOf(gvk), cache.BlockUntilSynced(false))
	if err != nil {
		return fmt.Errorf("starting an informer for %s: %w", gvk, err)
	}
	h := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, obj client.Object) []reconcile.Request {
		return s.requests(ctx, gvk, obj)
	})
	if err := s.controller.Watch(&source.Informer{Informer: informer, Handler: h}); err != nil {
		return fmt.Errorf("watching %s: %w", gvk, err)
	}
	s.kinds[gvk] = mapping.Resource.GroupResource()
	return nil
}

// CRDHandler stops watching the kinds of a CRD that is being deleted or is gone: left
// running, their informers would retry their list until the process restarts. A later
// Ensure starts them again.
func (s *Selected) CRDHandler() handler.EventHandler {
	changed := func(ctx context.Context, crd client.Object, gone bool) {
		if crd.GetDeletionTimestamp() == nil && !gone {
			return
		}
		resource, group, _ := strings.Cut(crd.GetName(), ".")
		gr := schema.GroupResource{Group: group, Resource: resource}
		s.mu.Lock()
		defer s.mu.Unlock()
		for gvk, r := range s.kinds {
			if r == gr && s.cache.RemoveInformer(ctx, metadataOf(gvk)) == nil {
				delete(s.kinds, gvk)
			}
		}
	}
	return handler.Funcs{
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			changed(ctx, e.ObjectNew, false)
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			changed(ctx, e.Object, true)
		},
	}
}

// metadataOf is the metadata-only object gvk's informer is keyed by.
func metadataOf(gvk schema.GroupVersionKind) *metav1.PartialObjectMetadata {
	obj := &metav1.PartialObjectMetadata{}
	obj.SetGroupVersionKind(gvk)
	return obj
}

// Slim is the transform of the selected kinds' cache: an object's identity and labels,
// which is all that maps it to Runnables.
func Slim(obj any) (any, error) {
	m, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return obj, nil
	}
	slim := &metav1.PartialObjectMetadata{TypeMeta: m.TypeMeta}
	slim.Namespace, slim.Name, slim.UID = m.Namespace, m.Name, m.UID
	slim.ResourceVersion, slim.Generation, slim.Labels = m.ResourceVersion, m.Generation, m.Labels
	slim.DeletionTimestamp = m.DeletionTimestamp
	return slim, nil
}
