package realizer

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/retry"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/surveyor-dev/surveyor/internal/echo"
	"github.com/surveyor-dev/surveyor/internal/impersonate"
	"github.com/surveyor-dev/surveyor/internal/watch"
	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/render"
	"github.com/surveyor-dev/surveyor/pkg/render/stamp"
	"github.com/surveyor-dev/surveyor/pkg/rollout"
)

// FieldManager is the server-side-apply field manager of every stamped object.
const FieldManager = "surveyor"

// reconcileTimeout bounds one owner's reconcile. A healthy one takes milliseconds to
// seconds (a few requests per resource); no reconcile waits for a kind (see watcher).
const reconcileTimeout = time.Minute

// controllerOptions are the owner and Runnable controllers': backoff for failed
// reconciles tops out at a minute, and no reconcile outlives reconcileTimeout (a request
// the API server never answers ends, and the object is retried, instead of holding a
// worker forever).
func controllerOptions() controller.Options {
	return controller.Options{
		RateLimiter:           workqueue.NewTypedItemExponentialFailureRateLimiter[ctrl.Request](50*time.Millisecond, time.Minute),
		ReconciliationTimeout: reconcileTimeout,
	}
}

// conflictRetry is when an object whose status write lost to a newer copy (an owner, a
// blueprint, a template) is looked at again: long enough for the cache to have caught up.
const conflictRetry = 200 * time.Millisecond

// OwnerReconciler realizes the owners of one kind (Workloads through ClusterSupplyChains,
// or Deliverables through ClusterDeliveries). It is the only owner reconciler: the kind's
// descriptor holds everything that differs between owner kinds.
type OwnerReconciler struct {
	kind   *v1alpha1.OwnerKind
	client client.Client // carto.run kinds from the cache
	// live reads the API server, for what the cache may not have caught up with.
	live     client.Reader
	status   statusWriter
	stamped  watch.StampedReader // stamped objects, from label-filtered informers
	imp      *impersonate.Impersonator
	watch    *watch.Watcher
	recorder record.EventRecorder
	now      func() metav1.Time
	// created are the immutable objects created but not yet seen in the cache.
	created createdObjects
	// echoes are the owner statuses and stamped objects this reconciler wrote, whose
	// watch events re-queue nothing.
	echoes *echo.Echoes
	// secretDigest digests outputs derived from a Secret, with the controller's key.
	secretDigest stamp.Digester
	// ytt evaluates the templates written in ytt (Options.YTT).
	ytt render.YTT
	// kstatus adds Stalled and Reconciling to owners (Options.KStatusConditions).
	kstatus bool
	// adopt are the field managers whose fields Surveyor takes over (Options.AdoptFieldManagers).
	adopt sets.Set[string]
	// answers are what the API server made of stamps it keeps otherwise than sent (answers.go).
	answers answers
}

// newOwnerReconciler wires a reconciler for one owner kind to the manager's cache,
// client and config, stamping through imp (one for every owner kind) and digesting
// Secret-derived outputs with secretDigest.
func newOwnerReconciler(mgr ctrl.Manager, kind *v1alpha1.OwnerKind, status statusWriter, recorder record.EventRecorder, imp *impersonate.Impersonator, secretDigest stamp.Digester) *OwnerReconciler {
	echoes := &echo.Echoes{}
	w := watch.New(mgr, kind.New(), echoes)
	return &OwnerReconciler{
		kind:         kind,
		status:       status,
		client:       mgr.GetClient(),
		live:         mgr.GetAPIReader(),
		stamped:      w.Reader(),
		imp:          imp,
		recorder:     recorder,
		now:          metav1.Now,
		echoes:       echoes,
		secretDigest: secretDigest,
		watch:        w,
		answers:      newAnswers(),
	}
}

// SetupWithManager registers the reconciler. A blueprint change re-queues its owners once
// the blueprint's status shows it, a template change the owners whose blueprint uses it,
// and a stamped object's change its controller owner (watches added on first use).
func (r *OwnerReconciler) SetupWithManager(mgr ctrl.Manager) error {
	k := r.kind
	b := ctrl.NewControllerManagedBy(mgr).Named(k.Singular()).
		Watches(k.New(), r.echoes.Handler(echo.OwnerKey, &handler.EnqueueRequestForObject{})).
		Watches(k.Blueprint.New(), handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []ctrl.Request {
			return ownersForBlueprint(ctx, r.client, k, render.BlueprintOf(o.(v1alpha1.Blueprint)))
		}), builder.WithPredicates(blueprintSeen(k.Blueprint)))
	// Owners read a template's spec, never its status, so the template reconciler's
	// status writes re-queue nothing.
	for _, tk := range v1alpha1.TemplateKinds {
		kind := tk.Kind
		b = b.Watches(tk.New(), handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []ctrl.Request {
			return ownersForTemplate(ctx, r.client, k, kind, o.GetName())
		}), builder.WithPredicates(predicate.GenerationChangedPredicate{}))
	}
	b = b.WatchesMetadata(watch.CRDObject(), r.watch.CRDHandler()).
		WatchesRawSource(source.Func(r.watch.Start))
	c, err := b.WithOptions(controllerOptions()).Build(r)
	if err != nil {
		return err
	}
	r.watch.SetController(c)
	return nil
}

// Reconcile realizes one owner and writes its status if it changed. User errors end up
// in conditions and return nil (the next change re-queues); only transient API errors
// are returned, so controller-runtime backs off.
func (r *OwnerReconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			result, err = r.panicked(ctx, req, p)
		}
	}()
	owner := r.kind.NewOwner()
	if err := r.client.Get(ctx, req.NamespacedName, owner); err != nil {
		if apierrors.IsNotFound(err) {
			r.forget(req)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !owner.GetDeletionTimestamp().IsZero() {
		r.forget(req)
		return ctrl.Result{}, nil // stamped objects go with it through owner references
	}
	if r.echoes.AwaitEcho(echo.OwnerKey(owner)) {
		// The cached copy predates this reconciler's last status write: a status computed
		// from it could look unchanged and never be written. The write's event re-queues
		// the owner once the cache has it (the delay is a fallback).
		return ctrl.Result{RequeueAfter: echo.Wait}, nil
	}
	orig := owner.DeepCopyObject().(v1alpha1.Owner)
	st := owner.GetOwnerStatus()
	obs, realizeErr := r.realize(ctx, owner, meta.IsStatusConditionTrue(st.Conditions, v1alpha1.ConditionComplete))
	if errors.Is(realizeErr, watch.ErrKindSyncing) {
		// The watcher re-queues the owner when the kind syncs; watch.SyncWait is a fallback.
		return ctrl.Result{RequeueAfter: watch.SyncWait}, nil
	}
	if obs == nil {
		return ctrl.Result{}, realizeErr
	}
	now := r.now()
	// The rollout record is the blueprint reconciler's alone (ownerStatus carries it as read):
	// written whole with the resourceVersion it was read at, a copy older than the blueprint's
	// last record loses instead of writing the old record back.
	*st = ownerStatus(r.kind, orig.GetOwnerStatus(), obs, owner.GetGeneration(), now, r.kstatus)
	owner.SetBlueprintRef(obs.blueprintRef)
	if !equality.Semantic.DeepEqual(orig.GetOwnerStatus(), st) || !equality.Semantic.DeepEqual(orig.GetBlueprintRef(), obs.blueprintRef) {
		// The whole status is written: no diff of two owners to compute, and the
		// resourceVersion it carries makes a status computed from a stale copy lose to
		// a newer one instead of overwriting it.
		err := r.echoes.Write(echo.OwnerKey(owner), owner, func() error { return r.status.update(ctx, owner) })
		if err != nil {
			if apierrors.IsConflict(err) {
				// The cached copy was stale. The newer copy's event re-queues the owner,
				// unless it is this reconciler's own write from longer ago than echo.Wait
				// (awaitEcho covers the rest), so look again shortly as well.
				return ctrl.Result{RequeueAfter: conflictRetry}, nil
			}
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
	}
	// A failure fixed outside the owner is in the status now; the owner looks again
	// later. A transient failure is returned, so controller-runtime retries with backoff.
	if errors.Is(realizeErr, errRetryLater) {
		return ctrl.Result{RequeueAfter: retryDelay(st, now)}, nil
	}
	if realizeErr != nil {
		return ctrl.Result{}, realizeErr
	}
	if complete := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionComplete); complete != nil && complete.Status == metav1.ConditionTrue {
		r.created.forgetOwner(req.NamespacedName) // a finished owner creates nothing more
		return r.expire(ctx, owner, complete)
	}
	return ctrl.Result{}, nil
}

// forget drops what the reconciler keeps about an owner that is gone or going: nothing
// grows with the history of owners that no longer exist (DESIGN §12).
func (r *OwnerReconciler) forget(req ctrl.Request) {
	r.created.forgetOwner(req.NamespacedName)
	r.watch.Forget(req)
}

// panicked turns a panic while realizing an owner into its Ready condition (the detail
// goes to the log, not the status) and returns an error so that the owner is retried
// with backoff while every other owner carries on.
//
// The write carries the resourceVersion it was computed from: the cached copy can lag a
// status this reconciler has just written (Complete=True, say), and the status is written
// whole, so without the lock it would write the old one back. On a conflict the owner is
// read again from the API server and the condition set on what it holds.
func (r *OwnerReconciler) panicked(ctx context.Context, req ctrl.Request, p any) (ctrl.Result, error) {
	err := fmt.Errorf("panic while realizing %s %s: %v", r.kind.Singular(), req.NamespacedName, p)
	logf.FromContext(ctx).Error(err, "recovered", "stack", string(debug.Stack()))
	var read client.Reader = r.client // the cached copy first: it costs no request, and is usually current
	writeErr := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		owner := r.kind.NewOwner()
		if err := read.Get(ctx, req.NamespacedName, owner); err != nil {
			return err
		}
		read = r.live
		st := owner.GetOwnerStatus()
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{
			Type: v1alpha1.ConditionReady, Status: metav1.ConditionUnknown, Reason: v1alpha1.ReasonReconcilePanicked,
			Message:            fmt.Sprintf("an internal error interrupted realizing this %s; see the controller logs", r.kind.Singular()),
			ObservedGeneration: owner.GetGeneration(),
		})
		return r.status.update(ctx, owner)
	})
	if writeErr != nil && !apierrors.IsNotFound(writeErr) {
		// The panic is what is returned (and retried); the failed write is only logged.
		logf.FromContext(ctx).Error(writeErr, "writing the panic into the status")
	}
	return ctrl.Result{}, err
}

// expire deletes a Complete owner ttlSecondsAfterFinished after it completed (its
// stamped objects follow through owner references). The requeue is timed to the
// deadline rather than polled.
func (r *OwnerReconciler) expire(ctx context.Context, owner v1alpha1.Owner, complete *metav1.Condition) (ctrl.Result, error) {
	ttlSeconds := owner.GetTTLSecondsAfterFinished()
	if ttlSeconds == nil {
		return ctrl.Result{}, nil
	}
	ttl := time.Duration(*ttlSeconds) * time.Second
	if wait := complete.LastTransitionTime.Add(ttl).Sub(r.now().Time); wait > 0 {
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	uid := owner.GetUID()
	// Through the writer, as a stamped object's delete: a webhook that hangs on the owner
	// kind's deletes holds a worker for a write timeout, not the reconcile's minute.
	w := writer{watch: r.watch, owner: watch.OwnerRequest(owner), client: r.client}
	err := w.delete(ctx, v1alpha1.GroupVersion.WithKind(r.kind.Kind), owner, client.Preconditions{UID: &uid})
	if err == nil {
		logf.FromContext(ctx).Info("deleted finished "+r.kind.Singular(), "ttlSecondsAfterFinished", *ttlSeconds)
	}
	return ctrl.Result{}, client.IgnoreNotFound(err)
}

// realize selects the blueprint, applies each resource in order and prunes what the owner
// no longer stamps, returning what it saw; it computes no owner status. With a
// nil observation nothing could be observed; with an error as well as an observation, a
// resource hit a transient failure the observation describes.
func (r *OwnerReconciler) realize(ctx context.Context, owner v1alpha1.Owner, finished bool) (*observation, error) {
	list := r.kind.Blueprint.NewList()
	if err := r.client.List(ctx, list); err != nil {
		return nil, err
	}
	o, err := render.NewOwner(owner)
	if err != nil {
		return nil, err
	}
	obs := &observation{}
	bp, cond := render.SelectBlueprint(o, render.BlueprintsOf(list))
	obs.blueprint = cond
	if bp != nil {
		obs.blueprintRef = &v1alpha1.BlueprintReference{Kind: bp.Kind.Kind, Name: bp.Name}
	}
	if bp == nil || cond.Status != metav1.ConditionTrue {
		obs.resources = nil
		obs.keepResources = true
		return obs, nil
	}

	if bp.Strategy != nil {
		var untrusted *untrustedRevisionError
		pinned, err := r.pinned(ctx, owner, bp)
		if errors.As(err, &untrusted) {
			// Whoever wrote the revision's name into the owner's status does not choose
			// what is stamped, nor as whom: nothing is, and the owner says why.
			obs.blueprint = metav1.Condition{Type: r.kind.BlueprintReady, Status: metav1.ConditionFalse,
				Reason: v1alpha1.ReasonRevisionNotTrusted, Message: untrusted.Error() + "; nothing is stamped from it"}
			obs.keepResources = true
			return obs, nil
		}
		if err != nil {
			return nil, err
		}
		bp = pinned
		obs.revision = bp.Revision
	}

	saNamespace, saName := render.ServiceAccount(owner, bp)
	cl, err := r.imp.ClientFor(saNamespace, saName)
	if err != nil {
		return nil, err
	}
	st := owner.GetOwnerStatus()
	rz := &realization{
		r: r, ctx: ctx, owner: owner, bp: bp, writer: writer{watch: r.watch, owner: watch.OwnerRequest(owner), client: cl},
		prev: st.Resources, pending: st.PendingDeletions, finished: finished,
	}
	rz.pass = &render.Pass{Owner: o, Blueprint: bp, Template: rz.template, YTT: r.ytt, Done: map[string]*render.Result{}}
	var transient error
	for i := range bp.Resources {
		res, err := rz.realize(&bp.Resources[i])
		if rz.syncing {
			return nil, watch.ErrKindSyncing
		}
		if err != nil && transient == nil {
			transient = err
		}
		rz.pass.Done[res.Status.Name] = res
		obs.resources = append(obs.resources, res)
		rz.healthEvent(res)
	}
	// Prune only after a clean pass: a failed apply must not cost an object. Either way
	// what is not deleted stays listed.
	obs.pending, err = rz.prune(obs.resources, transient == nil)
	if rz.syncing {
		return nil, watch.ErrKindSyncing
	}
	rz.events.Record(r.recorder, owner)
	switch {
	case transient != nil:
	case err != nil:
		// In the status now; nothing watched tells when a retry may succeed.
		transient = fmt.Errorf("%w: %w", errRetryLater, err)
	case rz.retention != nil:
		// Not in the status: tried again with backoff, and logged as the error it is.
		transient = rz.retention
	}
	return obs, transient
}

// pinned is the blueprint as the revision the owner is pinned to holds it (DESIGN §9), or
// as it is now while the blueprint has no revision yet. The owner's rollout record, which
// says the revision, is read here and never written: the blueprint reconciler admits owners
// and moves their records.
func (r *OwnerReconciler) pinned(ctx context.Context, owner v1alpha1.Owner, bp *render.Blueprint) (*render.Blueprint, error) {
	st := owner.GetOwnerStatus()
	name := rollout.PinnedRevision(st.Rollout, st.BlueprintRevision, bp.Status.Rollout)
	if name == "" {
		return bp, nil
	}
	rev := &v1alpha1.BlueprintRevision{}
	err := r.client.Get(ctx, client.ObjectKey{Name: name}, rev)
	if apierrors.IsNotFound(err) {
		// The blueprint's reconciler may have just made it, and its watch event not
		// reached the cache yet: nothing would re-queue the owner when it does.
		err = r.live.Get(ctx, client.ObjectKey{Name: name}, rev)
	}
	if err != nil {
		if apierrors.IsNotFound(err) {
			// Deleted by hand: nothing can stamp it any more, the owner follows the
			// blueprint as it is now until it is admitted to a revision again.
			logf.FromContext(ctx).Info("pinned revision not found; realizing the blueprint as it is", "revision", name)
			return bp, nil
		}
		return nil, err
	}
	return blueprintAt(r.kind.Blueprint, bp, rev)
}

// rolloutOwner is an owner of kind as pkg/rollout sees it, with status st.
func rolloutOwner(kind *v1alpha1.OwnerKind, owner v1alpha1.Owner, st *v1alpha1.OwnerStatus) rollout.Owner {
	bp := meta.FindStatusCondition(st.Conditions, kind.BlueprintReady)
	return rollout.Owner{
		Key: owner.GetNamespace() + "/" + owner.GetName(), Labels: owner.GetLabels(), Generation: owner.GetGeneration(),
		Running: st.BlueprintRevision, Record: st.Rollout, Ready: meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionReady),
		Stale: bp != nil && bp.Reason == kind.Blueprint.NotReconciled,
	}
}

// retryDelay is when an owner waiting on something outside it (a RoleBinding, a kind
// being served, a delete that a webhook or RBAC refuses) looks again: as long as the newest
// of its failures (ResourcesSubmitted not True, a pending deletion) has lasted, between a
// second and a minute, so the wait doubles without the reconciler keeping any state.
func retryDelay(st *v1alpha1.OwnerStatus, now metav1.Time) time.Duration {
	var newest *metav1.Condition
	if c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionResourcesSubmitted); c != nil && c.Status != metav1.ConditionTrue {
		newest = c
	}
	for _, p := range st.PendingDeletions {
		if newest == nil || p.Since.After(newest.LastTransitionTime.Time) {
			newest = &metav1.Condition{LastTransitionTime: p.Since}
		}
	}
	return retryAfter(newest, now)
}

// retryAfter is as long as the failing condition c (nil before the first) has been
// failing, between a second and a minute.
func retryAfter(c *metav1.Condition, now metav1.Time) time.Duration {
	const minDelay, maxDelay = time.Second, time.Minute
	delay := minDelay
	if c != nil {
		delay = now.Sub(c.LastTransitionTime.Time)
	}
	return min(max(delay, minDelay), maxDelay)
}
