package watch

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/surveyor-dev/surveyor/internal/apierr"
	"github.com/surveyor-dev/surveyor/internal/echo"
	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// probeAfter is how long a new informer may list before the API server is asked whether
// the kind lists at all. A kind that is served lists in milliseconds; one whose conversion
// webhook or APIService hangs never does. No reconcile waits for either: the owners that
// need the kind are re-queued when its informer syncs, or when the probe finds it not
// served. The probe, one request of one object, is bounded by the same delay.
const probeAfter = 3 * time.Second

// writeTimeout bounds one write of a stamped object. The API server answers a write in
// milliseconds unless a webhook of the kind (conversion or admission) hangs, which can
// take it 30 s and more; the kind is then stalled (see beginWrite).
const writeTimeout = 5 * time.Second

// Backoff of a kind whose writes time out: the first write after minStallBackoff tries
// again, and each failure doubles the wait, up to maxStallBackoff.
const (
	minStallBackoff = 10 * time.Second
	maxStallBackoff = 5 * time.Minute
)

// readTimeout bounds a read of the cache, which waits for a kind's sync: ensure has seen
// it synced, unless the kind's CRD went away in between.
const readTimeout = 3 * time.Second

// maxProbeInterval is the longest wait between two probes of a kind that still does not
// sync: probes of a kind that stays down back off to it.
const maxProbeInterval = time.Minute

// SyncWait is the longest an owner that waits for a kind's first sync waits without being
// re-queued: a fallback, since the sync or the probe re-queues it first.
const SyncWait = 30 * time.Second

// ErrKindSyncing is why an owner is not realized now: a kind it stamps is listing for the
// first time (e.g. after a restart), or has yet to answer a write in time while another
// write to it is in flight. Nothing is written meanwhile, neither objects nor status: an
// owner's status says what the cache saw, and a half-filled cache saw nothing. The owner
// is re-queued when the kind syncs, or when the write in flight ends.
var ErrKindSyncing = errors.New("a stamped kind is not ready for this owner yet")

// crdGVK is the kind whose deletion removes the informers of the kinds it defined.
var crdGVK = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}

// NotServedError is a stamped kind the API server does not serve right now: its
// discovery failed, or its informer could not list it. It is the API server's to fix
// (or the platform team's, by installing or repairing the kind), so the owner waits.
type NotServedError struct {
	gvk schema.GroupVersionKind
	err error
}

func (e *NotServedError) Error() string {
	return fmt.Sprintf("kind [%s] of [%s] is not served: %v", e.gvk.Kind, e.gvk.GroupVersion(), e.err)
}

func (e *NotServedError) Unwrap() error { return e.err }

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

// Reader reads stamped objects from the watcher's informers.
func (w *Watcher) Reader() StampedReader { return w.read }

// Write runs one write of a gvk object for owner within writeTimeout, as beginWrite lets
// it (see there), and records its outcome (written). A write that timed out is reported as
// the kind not served.
func (w *Watcher) Write(ctx context.Context, gvk schema.GroupVersionKind, owner reconcile.Request, do func(context.Context) error) error {
	if err := w.beginWrite(gvk, owner); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, writeTimeout)
	defer cancel()
	err := do(ctx)
	w.written(gvk, err)
	if timedOut(err) {
		return &NotServedError{gvk: gvk, err: fmt.Errorf("a write timed out: %w", err)}
	}
	return err
}

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

// NotServed is the error of writing a gvk object when the kind is not served.
func NotServed(gvk schema.GroupVersionKind, err error) error {
	return &NotServedError{gvk: gvk, err: err}
}

// kindWatch is one stamped kind's informer.
type kindWatch struct {
	informer cache.Informer
	mapping  *meta.RESTMapping
	resource schema.GroupResource // e.g. widgets.example.com, the name of its CRD
	// removed is closed when the informer is removed; it ends awaitSync.
	removed chan struct{}

	// Guarded by Watcher.mu:
	// waiters are the owners waiting for the first sync.
	waiters map[reconcile.Request]bool
	// notServed is the API server's answer to the last probe, while it failed.
	notServed error
	// stalled is a write to the kind that timed out, until one is answered in time;
	// retryAt is when the next write may try (see beginWrite).
	stalled error
	retryAt time.Time
	backoff time.Duration
	// proven says a write to the kind was answered in time since the informer started or
	// the last stall; until then one write at a time is let through (see beginWrite).
	proven   bool
	inflight int
}

// start records the controller's queue and lifetime. It is a source of the controller
// (source.Func), so it runs when the controller starts, before any reconcile.
func (w *Watcher) Start(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.queue, w.life = q, ctx
	return nil
}

// synced is gvk's informer once it has synced, nil before: the mapping it was started
// with holds while it runs (a CRD's deletion removes it), so the RESTMapper, which
// costs tens of microseconds a call, is asked once per kind.
func (w *Watcher) synced(gvk schema.GroupVersionKind) *kindWatch {
	w.mu.Lock()
	kw := w.kinds[gvk]
	deleting := kw != nil && w.deleting[kw.resource]
	w.mu.Unlock()
	if kw == nil || deleting || !kw.informer.HasSynced() {
		return nil
	}
	return kw
}

// ensure makes sure gvk is served and its informer has synced, without waiting. A kind whose informer is still listing gives ErrKindSyncing,
// and owner is re-queued when it syncs or is found not served. A kind that is not served
// gives a *NotServedError, and owner is re-queued when it syncs or when a CRD of the
// kind's group changes.
func (w *Watcher) Ensure(gvk schema.GroupVersionKind, owner reconcile.Request) error {
	if w.synced(gvk) != nil {
		return nil
	}
	mapping, err := w.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		w.Wait(gvk.Group, owner)
		if errors.As(err, new(*apiutil.ErrResourceDiscoveryFailed)) { // e.g. its APIService is down
			return &NotServedError{gvk: gvk, err: err}
		}
		return err
	}
	if mapping.Scope.Name() != meta.RESTScopeNameNamespace {
		return fmt.Errorf("%w: %s is cluster-scoped: a template must stamp a namespaced kind", apierr.ErrNotStampable, gvk.Kind)
	}
	kw, err := w.informer(gvk, mapping)
	if errors.Is(err, errCRDDeleting) {
		w.Wait(gvk.Group, owner)
		return &NotServedError{gvk: gvk, err: err}
	}
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	// Checked with w.mu held: awaitSync re-queues, with w.mu held, every waiter added
	// before it saw the sync.
	if kw.informer.HasSynced() {
		return nil
	}
	if kw.waiters == nil {
		kw.waiters = map[reconcile.Request]bool{}
	}
	kw.waiters[owner] = true
	if kw.notServed != nil {
		return &NotServedError{gvk: gvk, err: kw.notServed}
	}
	return ErrKindSyncing
}

// beginWrite lets a write to gvk for owner go, or says why not:
//   - while the kind's writes time out (it is stalled) and its next try is not due, a
//     *NotServedError, so that the owner reports it at once instead of holding a worker
//     until its own write times out; when a try is due, this write is it;
//   - while the kind has not answered a write in time yet and another write to it is in
//     flight, ErrKindSyncing: so when a kind's webhook hangs, one worker waits for it, not
//     every worker that reaches one of its owners. The owner is re-queued when that write
//     ends.
//
// Every write let go ends with written.
func (w *Watcher) beginWrite(gvk schema.GroupVersionKind, owner reconcile.Request) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	kw := w.kinds[gvk]
	switch {
	case kw == nil:
		return nil
	case kw.stalled != nil:
		now := time.Now()
		if now.Before(kw.retryAt) {
			return &NotServedError{gvk: gvk, err: fmt.Errorf("a write timed out: %w", kw.stalled)}
		}
		kw.retryAt = now.Add(writeTimeout + kw.backoff) // this write is the one try
	case !kw.proven && kw.inflight > 0:
		if kw.waiters == nil {
			kw.waiters = map[reconcile.Request]bool{}
		}
		kw.waiters[owner] = true
		return ErrKindSyncing
	}
	kw.inflight++
	return nil
}

// written records the outcome of a write to gvk that beginWrite let go: a timeout stalls
// the kind, with a backoff that doubles while writes keep timing out; an answer in time
// proves it, and ends a stall. Either way the owners waiting for the write are re-queued.
func (w *Watcher) written(gvk schema.GroupVersionKind, err error) {
	var answered apierrors.APIStatus
	w.mu.Lock()
	kw := w.kinds[gvk]
	if kw == nil {
		w.mu.Unlock()
		return
	}
	kw.inflight--
	switch {
	case timedOut(err):
		kw.backoff = min(max(2*kw.backoff, minStallBackoff), maxStallBackoff)
		kw.stalled, kw.retryAt, kw.proven = err, time.Now().Add(kw.backoff), false
	case err == nil || errors.As(err, &answered):
		kw.stalled, kw.backoff, kw.proven = nil, 0, true
	}
	waiters := kw.waiters
	kw.waiters = nil
	w.mu.Unlock()
	for owner := range waiters {
		w.queue.Add(owner)
	}
}

// timedOut says whether a write ran out of time, on either side.
func timedOut(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err)
}

// awaitSync waits for kw's first sync, re-queues the owners waiting for it, and returns.
// While the kind does not sync, the API server is asked why every probeAfter, backing off
// to maxProbeInterval: when a probe fails the kind is not served, and its waiting owners
// are re-queued to report it (a later reconcile reads kw.notServed without waiting); when
// it succeeds the kind has many objects and is still listing, and its owners wait.
func (w *Watcher) awaitSync(gvk schema.GroupVersionKind, kw *kindWatch) {
	ctx, cancel := context.WithCancel(w.life)
	defer cancel()
	go func() {
		select {
		case <-kw.removed:
			cancel()
		case <-ctx.Done():
		}
	}()
	for interval := probeAfter; ; interval = min(2*interval, maxProbeInterval) {
		waitCtx, done := context.WithTimeout(ctx, interval)
		synced := toolscache.WaitForCacheSync(waitCtx.Done(), kw.informer.HasSynced)
		done()
		if ctx.Err() != nil {
			return // removed, or the controller stopped
		}
		var notServed error
		if !synced {
			notServed = w.listError(ctx, gvk)
		}
		w.mu.Lock()
		// Re-queued: every owner once the kind syncs, and once when it is found not served.
		requeue := synced || (notServed != nil && kw.notServed == nil)
		kw.notServed = notServed
		var waiters map[reconcile.Request]bool
		if requeue {
			waiters, kw.waiters = kw.waiters, nil
		}
		w.mu.Unlock()
		for owner := range waiters {
			w.queue.Add(owner)
		}
		if synced {
			return
		}
	}
}

// informer returns gvk's informer, starting it (without waiting for it to sync) and
// routing its events to the controller on first use.
func (w *Watcher) informer(gvk schema.GroupVersionKind, mapping *meta.RESTMapping) (*kindWatch, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.deleting[mapping.Resource.GroupResource()] {
		return nil, errCRDDeleting
	}
	if kw, ok := w.kinds[gvk]; ok {
		return kw, nil
	}
	informer, err := w.cache.GetInformer(w.life, w.read.Object(gvk), cache.BlockUntilSynced(false))
	if err != nil {
		return nil, fmt.Errorf("starting an informer for %s: %w", gvk, err)
	}
	// Typed objects from the cache carry no kind, so their key is made from gvk.
	keyOf := func(obj client.Object) string { return echo.StampedKey(gvk, obj.GetNamespace(), obj.GetName()) }
	if err := w.controller.Watch(&source.Informer{Informer: informer, Handler: w.echoes.Handler(keyOf, w.handler)}); err != nil {
		return nil, fmt.Errorf("watching %s: %w", gvk, err)
	}
	kw := &kindWatch{informer: informer, mapping: mapping, resource: mapping.Resource.GroupResource(), removed: make(chan struct{})}
	w.kinds[gvk] = kw
	go w.awaitSync(gvk, kw)
	return kw, nil
}

// remove stops gvk's informer kw if it is still the current one; w.mu is held.
func (w *Watcher) remove(ctx context.Context, gvk schema.GroupVersionKind, kw *kindWatch) {
	if w.kinds[gvk] != kw {
		return
	}
	if err := w.cache.RemoveInformer(ctx, w.read.Object(gvk)); err == nil {
		delete(w.kinds, gvk)
		close(kw.removed)
		// Its waiting owners are re-queued: the kind is gone, which they now report.
		for owner := range kw.waiters {
			w.queue.Add(owner)
		}
	}
}

// listError is the API server's answer to a list of one gvk object, nil if it lists: an
// informer retries its list in the background and keeps the error to itself. The object
// is read whole, as the informer reads it: a kind whose conversion webhook hangs may still
// answer a list of metadata.
func (w *Watcher) listError(ctx context.Context, gvk schema.GroupVersionKind) error {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	probeCtx, cancel := context.WithTimeout(ctx, probeAfter)
	defer cancel()
	return w.probe.List(probeCtx, list, client.Limit(1))
}

// wait remembers that owner waits for a kind of group to be served.
func (w *Watcher) Wait(group string, owner reconcile.Request) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.waiting[group] == nil {
		w.waiting[group] = map[reconcile.Request]bool{}
	}
	w.waiting[group][owner] = true
}

// forget drops owner from every wait: it is gone.
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

// errCRDDeleting is why a kind whose CRD is being deleted is not served: writing to
// it would recreate the objects the deletion waits to see gone, and stall it.
var errCRDDeleting = errors.New("its CustomResourceDefinition is being deleted")

// crdChanged handles a change of a CRD, seen through its metadata; gone says it was
// deleted. From the moment a CRD is being deleted its kinds are out of service: their
// informers are removed (left running, they would retry their list until the process
// restarts, and serve a stale cache meanwhile), and the owners of the objects they
// held are re-queued to say so. The owners waiting for a kind of the CRD's group are
// re-queued on every change.
func (w *Watcher) crdChanged(ctx context.Context, crd client.Object, gone bool, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	resource, group, _ := strings.Cut(crd.GetName(), ".")
	gr := schema.GroupResource{Group: group, Resource: resource}
	deleting := crd.GetDeletionTimestamp() != nil && !gone
	w.mu.Lock()
	defer w.mu.Unlock()
	if deleting {
		w.deleting[gr] = true
	} else {
		delete(w.deleting, gr)
	}
	for gvk, kw := range w.kinds {
		if kw.resource != gr || !(deleting || gone) {
			continue
		}
		// An informer that has not synced realized nothing, and reading it would wait
		// for its sync with w.mu held.
		if kw.informer.HasSynced() {
			if objects, err := w.read.List(ctx, gvk); err == nil {
				for _, obj := range objects {
					w.handler.Delete(ctx, event.DeleteEvent{Object: obj}, q)
				}
			}
		}
		w.remove(ctx, gvk, kw)
	}
	for owner := range w.waiting[group] {
		q.Add(owner)
	}
	delete(w.waiting, group)
}

// crdHandler routes CRD events (metadata only) to crdChanged.
func (w *Watcher) CRDHandler() handler.EventHandler {
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			w.crdChanged(ctx, e.Object, false, q)
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			w.crdChanged(ctx, e.ObjectNew, false, q)
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			w.crdChanged(ctx, e.Object, true, q)
		},
	}
}

// CRDObject is the metadata-only object the CRD watch is keyed by.
func CRDObject() *metav1.PartialObjectMetadata {
	obj := &metav1.PartialObjectMetadata{}
	obj.SetGroupVersionKind(crdGVK)
	return obj
}

// OwnerRequest is the work-queue key of an owner.
func OwnerRequest(owner client.Object) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: owner.GetNamespace(), Name: owner.GetName()}}
}

// StampedReader reads stamped objects from the label-filtered informer cache, as
// unstructured objects, waiting at most readTimeout: the cache blocks a read of a kind
// whose informer has not synced, which ensure rules out unless the kind's CRD went away
// in between.
//
// Kubernetes' own kinds (ConfigMaps, Services, Deployments, Jobs...) are cached typed,
// so they are listed and watched as protobuf, and a typed object takes much less memory
// than an unstructured one (README, "What changed (issue 15)"); the stamped objects are
// most of the cache. A read converts the cached copy. Every other kind is cached unstructured.
type StampedReader struct {
	cache client.Reader
	// typed are the kinds cached typed: client-go's, when the manager's scheme has them.
	typed *runtime.Scheme
}

func NewStampedReader(c client.Reader, scheme *runtime.Scheme) StampedReader {
	return StampedReader{cache: c, typed: scheme}
}

// object is an empty object of the type the cache holds gvk in. Surveyor's own kinds (a
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

// get reads the gvk object at key.
func (r StampedReader) Get(ctx context.Context, gvk schema.GroupVersionKind, key client.ObjectKey) (*unstructured.Unstructured, error) {
	ctx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	obj := r.Object(gvk)
	if err := r.cache.Get(ctx, key, obj); err != nil {
		return nil, err
	}
	return AsUnstructured(gvk, obj)
}

// list reads the gvk objects that match opts.
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
