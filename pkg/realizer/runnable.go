package realizer

import (
	"context"
	"errors"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/surveyor-dev/surveyor/internal/echo"
	"github.com/surveyor-dev/surveyor/internal/impersonate"
	"github.com/surveyor-dev/surveyor/internal/transform"
	"github.com/surveyor-dev/surveyor/internal/watch"
	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/render"
)

// The Runnable reconciler writes Runnables' status; it reads ClusterRunTemplates, the
// selected objects and the runs with the wildcard read of manager.go, and selects, creates
// and deletes runs as each Runnable's ServiceAccount.
// +kubebuilder:rbac:groups=carto.run,resources=runnables/status,verbs=get;update;patch

// Cache indexes of Runnables, so that a change re-queues exactly the Runnables it affects.
const (
	// indexRunTemplate indexes Runnables by the ClusterRunTemplate they name.
	indexRunTemplate = "carto.run/run-template"
	// indexSelects indexes Runnables by the type their selector chooses, "apiVersion/Kind".
	indexSelects = "carto.run/selects"
)

// RunnableReconciler realizes Runnables (DESIGN §11): it stamps a Runnable's
// ClusterRunTemplate, creates a run exactly when the stamp differs from its newest run's
// (the digest annotation of lifecycle: immutable), deletes finished runs beyond its
// retention policy, reads the outputs of its latest run that succeeded, and writes its
// status once, computed from what it observed.
//
// It is the owner machinery's third user: runs are created through the same watcher of
// stamped kinds, write gating, impersonating clients and created-object bookkeeping as
// immutable objects, in a cache of their own (their label is carto.run/runnable-name).
type RunnableReconciler struct {
	client client.Client // Runnables and ClusterRunTemplates, from the cache
	live   client.Reader // ServiceAccounts, from the API server
	status statusWriter
	imp    *impersonate.Impersonator
	// watch starts the informers of the runs' kinds; runs reads them.
	watch    *watch.Watcher
	runs     watch.StampedReader
	selected *watch.Selected
	mapper   meta.RESTMapper
	recorder record.EventRecorder
	now      func() metav1.Time
	// created are the runs created but not yet seen in the cache.
	created createdObjects
	// echoes are the Runnable statuses this reconciler wrote.
	echoes *echo.Echoes
	// pace spaces the runs of a Runnable that creates them back to back.
	pace runPacer
}

// setupRunnables registers the Runnable reconciler, its caches and its indexes with the
// manager, stamping through imp (the owners' impersonator) and recording with recorder.
func setupRunnables(ctx context.Context, mgr ctrl.Manager, recorder record.EventRecorder, imp *impersonate.Impersonator, shard labels.Selector) error {
	runs, err := labelledCache(mgr, labelled(v1alpha1.LabelRunnableName, shard), transform.Runs)
	if err != nil {
		return err
	}
	selected, err := cache.New(mgr.GetConfig(), cache.Options{
		HTTPClient: mgr.GetHTTPClient(), Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(), DefaultTransform: watch.Slim,
	})
	if err != nil {
		return err
	}
	for _, c := range []cache.Cache{runs, selected} {
		if err := mgr.Add(c); err != nil {
			return err
		}
	}
	idx := mgr.GetFieldIndexer()
	if err := idx.IndexField(ctx, &v1alpha1.Runnable{}, indexRunTemplate, func(o client.Object) []string {
		return []string{o.(*v1alpha1.Runnable).Spec.RunTemplateRef.Name}
	}); err != nil {
		return err
	}
	if err := idx.IndexField(ctx, &v1alpha1.Runnable{}, indexSelects, func(o client.Object) []string {
		if s := o.(*v1alpha1.Runnable).Spec.Selector; s != nil {
			return []string{s.Resource.APIVersion + "/" + s.Resource.Kind}
		}
		return nil
	}); err != nil {
		return err
	}
	status, err := newStatusWriter(mgr, v1alpha1.Runnables)
	if err != nil {
		return err
	}
	echoes := &echo.Echoes{}
	w := watch.NewIn(mgr, runs, &v1alpha1.Runnable{}, echoes)
	r := &RunnableReconciler{
		client: mgr.GetClient(), live: mgr.GetAPIReader(), status: status, imp: imp,
		watch: w, runs: w.Reader(), mapper: mgr.GetRESTMapper(), recorder: recorder, now: metav1.Now, echoes: echoes,
	}
	r.selected = watch.NewSelected(selected, mgr.GetRESTMapper(), r.selecting)
	return r.SetupWithManager(mgr)
}

// labelledCache is a cache of the manager's whose informers hold only the objects sel
// selects, through transform.
func labelledCache(mgr ctrl.Manager, sel labels.Selector, t func(any) (any, error)) (cache.Cache, error) {
	return cache.New(mgr.GetConfig(), cache.Options{
		HTTPClient: mgr.GetHTTPClient(), Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(),
		DefaultLabelSelector: sel, DefaultTransform: t,
	})
}

// SetupWithManager registers the reconciler. A Runnable's change re-queues it (not its
// own status writes), a ClusterRunTemplate's spec change the Runnables naming it, a run's
// change its Runnable, and a selectable object's change the Runnables that select it.
func (r *RunnableReconciler) SetupWithManager(mgr ctrl.Manager) error {
	b := ctrl.NewControllerManagedBy(mgr).Named(v1alpha1.Runnables.Singular()).
		Watches(&v1alpha1.Runnable{}, r.echoes.Handler(echo.OwnerKey, &handler.EnqueueRequestForObject{})).
		Watches(&v1alpha1.ClusterRunTemplate{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []ctrl.Request {
			return r.runnables(ctx, client.MatchingFields{indexRunTemplate: o.GetName()})
		}), builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WatchesMetadata(watch.CRDObject(), r.watch.CRDHandler()).
		WatchesMetadata(watch.CRDObject(), r.selected.CRDHandler()).
		WatchesRawSource(source.Func(r.watch.Start)).
		WatchesRawSource(source.Func(r.selected.Start)).
		WithOptions(controllerOptions())
	c, err := b.Build(r)
	if err != nil {
		return err
	}
	r.watch.SetController(c)
	r.selected.SetController(c)
	return nil
}

// runnables lists the Runnables that match opts, as requests.
func (r *RunnableReconciler) runnables(ctx context.Context, opts ...client.ListOption) []ctrl.Request {
	var list v1alpha1.RunnableList
	if err := r.client.List(ctx, &list, opts...); err != nil {
		logf.FromContext(ctx).Error(err, "listing runnables")
		return nil
	}
	reqs := make([]ctrl.Request, len(list.Items))
	for i := range list.Items {
		reqs[i] = ctrl.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])}
	}
	return reqs
}

// selecting lists the Runnables whose selector chooses objects of gvk and obj's labels: in
// obj's namespace, or in any for a cluster-scoped object.
func (r *RunnableReconciler) selecting(ctx context.Context, gvk schema.GroupVersionKind, obj client.Object) []reconcile.Request {
	var list v1alpha1.RunnableList
	opts := []client.ListOption{client.MatchingFields{indexSelects: gvk.GroupVersion().String() + "/" + gvk.Kind}}
	if obj.GetNamespace() != "" {
		opts = append(opts, client.InNamespace(obj.GetNamespace()))
	}
	if err := r.client.List(ctx, &list, opts...); err != nil {
		logf.FromContext(ctx).Error(err, "listing runnables by selector", "kind", gvk)
		return nil
	}
	var reqs []reconcile.Request
	for i := range list.Items {
		rn := &list.Items[i]
		if labels.SelectorFromSet(rn.Spec.Selector.MatchingLabels).Matches(labels.Set(obj.GetLabels())) {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(rn)})
		}
	}
	return reqs
}

// Reconcile realizes one Runnable and writes its status if it changed. What the user must
// fix ends in conditions and returns nil (a watched change re-queues it); a failure fixed
// outside anything watched (RBAC, a ServiceAccount created later) is looked at again
// later; a transient API error is returned, so controller-runtime backs off.
func (r *RunnableReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	rn := &v1alpha1.Runnable{}
	if err := r.client.Get(ctx, req.NamespacedName, rn); err != nil {
		if apierrors.IsNotFound(err) {
			r.forget(req)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !rn.DeletionTimestamp.IsZero() {
		r.forget(req)
		return ctrl.Result{}, nil // its runs go with it through owner references
	}
	if r.echoes.AwaitEcho(echo.OwnerKey(rn)) {
		// The cached copy predates this reconciler's last status write (see the owner
		// reconciler's Reconcile).
		return ctrl.Result{RequeueAfter: echo.Wait}, nil
	}
	rz := &runRealization{r: r, ctx: ctx, rn: rn, req: req}
	obs, err := rz.realize()
	if errors.Is(err, watch.ErrKindSyncing) || rz.syncing {
		// Nothing is written while the runs' kind lists for the first time: the watcher
		// re-queues the Runnable when it syncs; watch.SyncWait is a fallback.
		return ctrl.Result{RequeueAfter: watch.SyncWait}, nil
	}
	now := r.now()
	st := runnableStatus(&rn.Status, obs, rn.Generation, now)
	if !equality.Semantic.DeepEqual(rn.Status, st) {
		rn.Status = st
		werr := r.echoes.Write(echo.OwnerKey(rn), rn, func() error { return r.status.update(ctx, rn) })
		if apierrors.IsConflict(werr) {
			return ctrl.Result{RequeueAfter: conflictRetry}, nil
		}
		if werr != nil {
			return ctrl.Result{}, client.IgnoreNotFound(werr)
		}
	}
	rz.events.Record(r.recorder, rn)
	switch {
	case errors.Is(err, errRetryLater):
		return ctrl.Result{RequeueAfter: retryAfter(meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionRunTemplateReady), now)}, nil
	case err != nil:
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: obs.deferred}, nil
}

// forget drops what the reconciler keeps about a Runnable that is gone or going.
func (r *RunnableReconciler) forget(req ctrl.Request) {
	r.created.forgetOwner(req.NamespacedName)
	r.watch.Forget(req)
	r.pace.forget(req.NamespacedName)
}

// runnableStatus computes a Runnable's whole status from an observation: a pure function
// of the previous status (transition times, and what an error keeps), what was observed,
// the generation and the time. Outputs and runs that could not be read this time are kept
// as they were: an error never takes away what a supply chain reads.
func runnableStatus(prev *v1alpha1.RunnableStatus, obs *runObservation, generation int64, now metav1.Time) v1alpha1.RunnableStatus {
	st := v1alpha1.RunnableStatus{
		ObservedGeneration: generation,
		Conditions:         mergeConditions(prev.Conditions, render.RunnableConditions(obs.result, generation), now),
		Outputs:            prev.Outputs,
		Runs:               prev.Runs,
	}
	if obs.outputs != nil {
		st.Outputs = obs.outputs
	}
	if obs.runsKnown {
		st.Runs = render.RunsOf(obs.runs)
	}
	return st
}
