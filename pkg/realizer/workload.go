package realizer

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// FieldManager is the server-side-apply field manager of every stamped object.
const FieldManager = "surveyor"

// WorkloadReconciler realizes Workloads through ClusterSupplyChains.
type WorkloadReconciler struct {
	client   client.Client // carto.run kinds from the cache; status writes
	stamped  client.Reader // stamped objects, from label-filtered informers
	imp      *impersonator
	watch    *watcher
	recorder record.EventRecorder
	now      func() metav1.Time
}

// NewWorkloadReconciler wires a reconciler to the manager's cache, client and config.
func NewWorkloadReconciler(mgr ctrl.Manager) *WorkloadReconciler {
	return &WorkloadReconciler{
		client:   mgr.GetClient(),
		stamped:  mgr.GetCache(),
		imp:      newImpersonator(mgr.GetConfig(), mgr.GetScheme(), mgr.GetRESTMapper()),
		recorder: mgr.GetEventRecorderFor("surveyor"),
		now:      metav1.Now,
		watch: &watcher{
			cache:  mgr.GetCache(),
			mapper: mgr.GetRESTMapper(),
			handler: handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(),
				&v1alpha1.Workload{}, handler.OnlyControllerOwner()),
		},
	}
}

// SetupWithManager registers the reconciler. A supply-chain change re-queues its
// Workloads, a template change the Workloads whose supply chain uses it, and a
// stamped object's change its controller owner (watches added on first use).
func (r *WorkloadReconciler) SetupWithManager(mgr ctrl.Manager) error {
	b := ctrl.NewControllerManagedBy(mgr).Named("workload").For(&v1alpha1.Workload{}).
		Watches(&v1alpha1.ClusterSupplyChain{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []ctrl.Request {
			return workloadsForSupplyChain(ctx, r.client, o.(*v1alpha1.ClusterSupplyChain))
		}))
	for kind, newObj := range templateKinds {
		b = b.Watches(newObj(), handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []ctrl.Request {
			return workloadsForTemplate(ctx, r.client, kind, o.GetName())
		}))
	}
	// Backoff for failed reconciles tops out at a minute, so a Workload denied by RBAC
	// notices a new RoleBinding soon without polling hard.
	b = b.WithOptions(controller.Options{
		RateLimiter: workqueue.NewTypedItemExponentialFailureRateLimiter[ctrl.Request](50*time.Millisecond, time.Minute),
	})
	c, err := b.Build(r)
	if err != nil {
		return err
	}
	r.watch.controller = c
	r.watch.watched = map[schema.GroupVersionKind]bool{}
	return nil
}

// Reconcile realizes one Workload and writes its status if it changed. User errors
// end up in conditions and return nil (the next change re-queues); only transient
// API errors are returned, so controller-runtime backs off.
func (r *WorkloadReconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			result, err = r.panicked(ctx, req, p)
		}
	}()
	wl := &v1alpha1.Workload{}
	if err := r.client.Get(ctx, req.NamespacedName, wl); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !wl.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil // stamped objects go with it through owner references
	}
	orig := wl.DeepCopy()
	obs, realizeErr := r.observe(ctx, wl, meta.IsStatusConditionTrue(wl.Status.Conditions, v1alpha1.ConditionComplete))
	if obs == nil {
		return ctrl.Result{}, realizeErr
	}
	wl.Status = workloadStatus(&orig.Status, obs, wl.Generation, r.now())
	if !equality.Semantic.DeepEqual(orig.Status, wl.Status) {
		// The optimistic lock makes a status computed from a stale copy lose to a newer
		// one instead of overwriting it; the conflict re-queues with the fresh copy.
		patch := client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})
		if err := r.client.Status().Patch(ctx, wl, patch); err != nil {
			if apierrors.IsConflict(err) {
				return ctrl.Result{Requeue: true}, nil
			}
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
	}
	// A transient failure is in the status now; returning it makes controller-runtime
	// retry with backoff.
	if errors.Is(realizeErr, errRetryLater) {
		return ctrl.Result{Requeue: true}, nil
	}
	if realizeErr != nil {
		return ctrl.Result{}, realizeErr
	}
	if complete := meta.FindStatusCondition(wl.Status.Conditions, v1alpha1.ConditionComplete); complete != nil && complete.Status == metav1.ConditionTrue {
		return r.expire(ctx, wl, complete)
	}
	return ctrl.Result{}, nil
}

// panicked turns a panic while realizing a Workload into its Ready condition (the
// detail goes to the log, not the status) and returns an error so that the Workload
// is retried with backoff while every other Workload carries on.
func (r *WorkloadReconciler) panicked(ctx context.Context, req ctrl.Request, p any) (ctrl.Result, error) {
	err := fmt.Errorf("panic while realizing workload %s: %v", req.NamespacedName, p)
	logf.FromContext(ctx).Error(err, "recovered", "stack", string(debug.Stack()))
	wl := &v1alpha1.Workload{}
	if getErr := r.client.Get(ctx, req.NamespacedName, wl); getErr != nil {
		return ctrl.Result{}, err
	}
	orig := wl.DeepCopy()
	conds := slices.Clone(wl.Status.Conditions)
	meta.SetStatusCondition(&conds, metav1.Condition{
		Type: v1alpha1.ConditionReady, Status: metav1.ConditionUnknown, Reason: reasonReconcilePanicked,
		Message: "an internal error interrupted realizing this workload; see the controller logs", ObservedGeneration: wl.Generation,
	})
	wl.Status.Conditions = conds
	_ = r.client.Status().Patch(ctx, wl, client.MergeFrom(orig))
	return ctrl.Result{}, err
}

// reasonReconcilePanicked is Ready's reason after a recovered panic.
const reasonReconcilePanicked = "ReconcilePanicked"

// expire deletes a Complete Workload ttlSecondsAfterFinished after it completed (its
// stamped objects follow through owner references). The requeue is timed to the
// deadline rather than polled.
func (r *WorkloadReconciler) expire(ctx context.Context, wl *v1alpha1.Workload, complete *metav1.Condition) (ctrl.Result, error) {
	if wl.Spec.TTLSecondsAfterFinished == nil {
		return ctrl.Result{}, nil
	}
	ttl := time.Duration(*wl.Spec.TTLSecondsAfterFinished) * time.Second
	if wait := complete.LastTransitionTime.Add(ttl).Sub(r.now().Time); wait > 0 {
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	uid := wl.UID
	err := r.client.Delete(ctx, wl, client.Preconditions{UID: &uid}, client.PropagationPolicy(metav1.DeletePropagationBackground))
	if err == nil {
		logf.FromContext(ctx).Info("deleted finished workload", "ttlSecondsAfterFinished", *wl.Spec.TTLSecondsAfterFinished)
	}
	return ctrl.Result{}, client.IgnoreNotFound(err)
}

// observe selects the supply chain and realizes each resource in order, returning
// what it saw. It performs the writes (applies, prunes) but computes no owner status.
// With a nil observation nothing could be observed; with an error as well as an
// observation, a resource hit a transient failure the observation describes.
func (r *WorkloadReconciler) observe(ctx context.Context, wl *v1alpha1.Workload, finished bool) (*observation, error) {
	var chains v1alpha1.ClusterSupplyChainList
	if err := r.client.List(ctx, &chains); err != nil {
		return nil, err
	}
	owner, err := ownerObject(wl)
	if err != nil {
		return nil, err
	}
	obs := &observation{}
	sc, cond := selectSupplyChain(owner, chains.Items)
	obs.supplyChain = cond
	if sc == nil || cond.Status != metav1.ConditionTrue {
		if sc != nil {
			obs.supplyChainRef = &v1alpha1.BlueprintReference{Kind: v1alpha1.KindClusterSupplyChain, Name: sc.Name}
		}
		obs.resources = nil
		obs.keepResources = true
		return obs, nil
	}
	obs.supplyChainRef = &v1alpha1.BlueprintReference{Kind: v1alpha1.KindClusterSupplyChain, Name: sc.Name}

	saNamespace, saName := serviceAccount(wl, sc)
	cl, err := r.imp.clientFor(saNamespace, saName)
	if err != nil {
		return nil, err
	}
	rz := &realization{
		r: r, ctx: ctx, wl: wl, owner: owner, sc: sc, client: cl,
		prev: wl.Status.Resources, byName: map[string]*resourceResult{}, finished: finished,
	}
	var transient error
	for i := range sc.Spec.Resources {
		res, err := rz.realize(&sc.Spec.Resources[i])
		if err != nil && transient == nil {
			transient = err
		}
		rz.byName[res.status.Name] = res
		obs.resources = append(obs.resources, res)
		rz.healthEvent(res)
	}
	if transient == nil {
		// Prune only after a clean pass: a failed apply must not cost an object.
		rz.prune(obs.resources)
	}
	return obs, transient
}

// serviceAccount is the identity stamping runs as: the Workload's, else the supply
// chain's (in its namespace, by default the Workload's), else "default".
func serviceAccount(wl *v1alpha1.Workload, sc *v1alpha1.ClusterSupplyChain) (namespace, name string) {
	switch {
	case wl.Spec.ServiceAccountName != "":
		return wl.Namespace, wl.Spec.ServiceAccountName
	case sc.Spec.ServiceAccountRef != nil && sc.Spec.ServiceAccountRef.Name != "":
		if ns := sc.Spec.ServiceAccountRef.Namespace; ns != "" {
			return ns, sc.Spec.ServiceAccountRef.Name
		}
		return wl.Namespace, sc.Spec.ServiceAccountRef.Name
	}
	return wl.Namespace, "default"
}

// ownerObject is the Workload as the map that $(workload.…)$ paths and selector
// fields read.
func ownerObject(wl *v1alpha1.Workload) (map[string]any, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(wl)
	if err != nil {
		return nil, fmt.Errorf("converting workload: %w", err)
	}
	m["apiVersion"] = v1alpha1.GroupVersion.String()
	m["kind"] = v1alpha1.KindWorkload
	return m, nil
}

// event records an event on the Workload.
func (r *WorkloadReconciler) event(wl *v1alpha1.Workload, reason, format string, args ...any) {
	r.recorder.Eventf(wl, corev1.EventTypeNormal, reason, format, args...)
}
