package web

import (
	"context"
	"errors"
	"io"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/view"
)

// watched is a kind the web view watches: the owner kinds, the blueprint kinds and Runnables.
type watched struct {
	kind, resource string
	namespaced     bool
	newObj         func() runtime.Object
	// set stores an object of the kind; del forgets one.
	set func(*Store, runtime.Object)
	del func(*Store, Key)
}

func setOwner(s *Store, obj runtime.Object) { s.SetOwner(view.OwnerOf(obj.(v1alpha1.Owner))) }

func setBlueprint(s *Store, obj runtime.Object) {
	if bp, ok := view.BlueprintOf(obj.(metav1.Object)); ok {
		s.SetBlueprint(bp)
	}
}

// watchedKinds are the owner and blueprint kinds of the table of kinds, and Runnables.
var watchedKinds = func() []watched {
	var out []watched
	for _, k := range v1alpha1.OwnerKinds {
		out = append(out, watched{k.Kind, k.Resource, k.Namespaced, func() runtime.Object { return k.New() }, setOwner, (*Store).DeleteOwner})
	}
	for _, k := range v1alpha1.BlueprintKinds {
		out = append(out, watched{k.Kind, k.Resource, k.Namespaced, func() runtime.Object { return k.New() }, setBlueprint, (*Store).DeleteBlueprint})
	}
	k := v1alpha1.Runnables
	return append(out, watched{k.Kind, k.Resource, k.Namespaced, func() runtime.Object { return k.New() }, setRunnable, (*Store).DeleteRunnable})
}()

func setRunnable(s *Store, obj runtime.Object) {
	s.SetRunnable(view.RunnableOf(obj.(*v1alpha1.Runnable)))
}

// Watch runs one informer per kind (Workloads, Deliverables and Runnables in namespace, ""
// for all, and the cluster's ClusterSupplyChains and ClusterDeliveries) until ctx ends, keeping s
// up to date and recording in s how each watch is doing. getter is a REST client of
// carto.run/v1alpha1 with the user's credentials; it needs get, list and watch.
func Watch(ctx context.Context, getter cache.Getter, namespace string, s *Store) error {
	var wg sync.WaitGroup
	for _, w := range watchedKinds {
		ns := namespace
		if !w.namespaced {
			ns = metav1.NamespaceAll
		}
		inf := cache.NewSharedIndexInformer(cache.NewListWatchFromClient(getter, w.resource, ns, fields.Everything()), w.newObj(), 0, cache.Indexers{})
		// The page reads status and a few fields of the spec; the rest need not stay in memory.
		if err := inf.SetTransform(slim); err != nil {
			return err
		}
		if err := inf.SetWatchErrorHandler(func(_ *cache.Reflector, err error) {
			if msg := watchError(w, err); msg != "" {
				s.SetKindState(KindState{Kind: w.kind, Synced: inf.HasSynced(), Err: msg})
			}
		}); err != nil {
			return err
		}
		// Any event means the watch works: an earlier error is over.
		working := func() {
			if st := s.KindState(w.kind); st.Err != "" && st.Synced {
				s.SetKindState(KindState{Kind: w.kind, Synced: true})
			}
		}
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { w.set(s, obj.(runtime.Object)); working() },
			UpdateFunc: func(_, obj any) { w.set(s, obj.(runtime.Object)); working() },
			DeleteFunc: func(obj any) {
				if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
					obj = d.Obj
				}
				if m, ok := obj.(metav1.Object); ok {
					w.del(s, Key{Kind: w.kind, Namespace: m.GetNamespace(), Name: m.GetName()})
				}
				working()
			},
		}); err != nil {
			return err
		}
		wg.Add(2)
		go func() { defer wg.Done(); inf.RunWithContext(ctx) }()
		go func() {
			defer wg.Done()
			if cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
				s.SetKindState(KindState{Kind: w.kind, Synced: true})
			}
		}()
	}
	wg.Wait()
	return ctx.Err()
}

// slim drops what the pages never show from an object before the informer keeps it.
func slim(obj any) (any, error) {
	if m, ok := obj.(metav1.Object); ok {
		m.SetManagedFields(nil)
		m.SetAnnotations(nil)
	}
	return obj, nil
}

// watchError is what a page says of a list or watch error of kind w, or "" for the
// errors a watch meets in normal work (a watch that ended, a resource version too old),
// after which it lists again by itself.
func watchError(w watched, err error) string {
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), apierrors.IsResourceExpired(err), apierrors.IsGone(err):
		return ""
	case apierrors.IsNotFound(err):
		return "the cluster does not serve " + w.resource + "." + v1alpha1.GroupVersion.Group + ": is Surveyor installed? Its CRDs are in config/crd"
	case apierrors.IsForbidden(err):
		return "not allowed by RBAC: " + err.Error()
	}
	return err.Error()
}
