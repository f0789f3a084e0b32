package watch

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/surveyor-dev/surveyor/internal/echo"
)

// Watcher starts an informer for each stamped kind the first time it is used. The
// informers see only objects carrying Surveyor's labels (the cache's default label
// selector), so objects Surveyor did not stamp never enter memory. Events go to the
// object's controller owner.
//
// No reconcile waits for an informer's first list, and no lock is held while one runs:
// an owner that needs a kind still listing gives ErrKindSyncing and writes nothing, and
// awaitSync re-queues it when the informer syncs, or when the API server says the kind
// is not served, which the owner then reports. So a kind that is slow or not served
// costs only its own owners a retry, never a worker. The informers of a CRD being
// deleted are removed (see crdChanged).
type Watcher struct {
	cache   cache.Cache
	read    StampedReader // the same cache, as stamped objects are read
	mapper  meta.RESTMapper
	handler handler.EventHandler
	// echoes are the stamped objects the reconciler applied, whose events it ignores.
	echoes *echo.Echoes
	// probe reads the API server directly, to say why a kind does not list.
	probe client.Reader

	// queue and life are the controller's queue and lifetime, known once it starts.
	queue workqueue.TypedRateLimitingInterface[reconcile.Request]
	life  context.Context

	mu         sync.Mutex
	controller controller.Controller
	kinds      map[schema.GroupVersionKind]*kindWatch
	// waiting are the owners that found a kind of the group not served, by group.
	waiting map[string]map[reconcile.Request]bool
	// deleting are the resources whose CRD is being deleted.
	deleting map[schema.GroupResource]bool
}

// New makes the watcher of the kinds an owner kind stamps. A stamped object's change
// re-queues its controller owner, an object like owner; echoes are the stamped objects the
// owner reconciler applied, whose events re-queue nothing.
func New(mgr ctrl.Manager, owner client.Object, echoes *echo.Echoes) *Watcher {
	return NewIn(mgr, mgr.GetCache(), owner, echoes)
}

// NewIn is New with the informers in c, a cache of the manager's: Runnables' runs carry
// other labels than owners' objects, so their informers select by another label.
func NewIn(mgr ctrl.Manager, c cache.Cache, owner client.Object, echoes *echo.Echoes) *Watcher {
	return &Watcher{
		echoes:   echoes,
		cache:    c,
		read:     NewStampedReader(c, mgr.GetScheme()),
		mapper:   mgr.GetRESTMapper(),
		probe:    mgr.GetAPIReader(),
		kinds:    map[schema.GroupVersionKind]*kindWatch{},
		waiting:  map[string]map[reconcile.Request]bool{},
		deleting: map[schema.GroupResource]bool{},
		handler:  handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), owner, handler.OnlyControllerOwner()),
	}
}

// SetController is the controller the informers of stamped kinds feed; set it once it is
// built, before it starts.
func (w *Watcher) SetController(c controller.Controller) { w.controller = c }

// Start records the controller's queue and lifetime. It is a source of the controller
// (source.Func), so it runs when the controller starts, before any reconcile.
func (w *Watcher) Start(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.queue, w.life = q, ctx
	return nil
}

// Reader reads stamped objects from the watcher's informers.
func (w *Watcher) Reader() StampedReader { return w.read }

// Resource is the resource of gvk, e.g. widgets.example.com, or "" when it is not known.
func (w *Watcher) Resource(gvk schema.GroupVersionKind) string {
	if kw := w.synced(gvk); kw != nil {
		return kw.resource.String()
	}
	if mapping, err := w.mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err == nil {
		return mapping.Resource.GroupResource().String()
	}
	return ""
}

// SyncWait is the longest an owner that waits for a kind's first sync waits without being
// re-queued: a fallback, since the sync or the probe re-queues it first.
const SyncWait = 30 * time.Second

// Wait remembers that owner waits for a kind of group to be served.
func (w *Watcher) Wait(group string, owner reconcile.Request) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.waiting[group] == nil {
		w.waiting[group] = map[reconcile.Request]bool{}
	}
	w.waiting[group][owner] = true
}

// Forget drops owner from every wait: it is gone.
func (w *Watcher) Forget(owner reconcile.Request) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for group, owners := range w.waiting {
		delete(owners, owner)
		if len(owners) == 0 {
			delete(w.waiting, group)
		}
	}
	for _, kw := range w.kinds {
		delete(kw.waiters, owner)
	}
}

// OwnerRequest is the work-queue key of an owner.
func OwnerRequest(owner client.Object) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: owner.GetNamespace(), Name: owner.GetName()}}
}
