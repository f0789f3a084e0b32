package realizer

import (
	"context"
	"errors"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/render"
)

// BlueprintReconciler reports whether a blueprint's templates exist: conditions
// TemplatesReady and Ready. With a rolloutStrategy it also runs the blueprint's rollout
// (rollout.go). One instance serves each blueprint kind (ClusterSupplyChain,
// ClusterDelivery).
type BlueprintReconciler struct {
	client client.Client
	kind   *v1alpha1.BlueprintKind
	// status writes the blueprint's status; records the rollout records of its owners, which
	// this reconciler alone writes.
	status   statusWriter
	records  statusWriter
	recorder record.EventRecorder
	now      func() metav1.Time
}

// ownerBatch is how long a blueprint with a rolloutStrategy waits after an owner's change before
// it decides: every change in that time goes into one decision. A decision reads every owner
// of the blueprint, so deciding once per owner's change would cost O(owners²) while thousands
// of them converge (DESIGN §9, Cost); a second is little next to a rollout's soaks.
const ownerBatch = time.Second

// SetupWithManager registers the reconciler; a template change re-queues the blueprints
// that reference it, found through the template index.
func (r *BlueprintReconciler) SetupWithManager(mgr ctrl.Manager) error {
	enqueue := func(ctx context.Context, o client.Object, q workqueue.TypedRateLimitingInterface[ctrl.Request]) {
		owner := o.(v1alpha1.Owner)
		ref := owner.GetBlueprintRef()
		if ref == nil || ref.Kind != r.kind.Kind {
			return
		}
		bp := r.kind.NewBlueprint()
		if r.client.Get(ctx, client.ObjectKey{Name: ref.Name}, bp) != nil {
			return
		}
		// A blueprint without a strategy needs an owner's change only when the owner still has
		// a record (forgetRollout clears it): its reconcile may have read the owner from the
		// cache before the cache showed the record's pin.
		if render.BlueprintOf(bp).Strategy == nil && owner.GetOwnerStatus().Rollout == nil {
			return
		}
		q.AddAfter(ctrl.Request{NamespacedName: client.ObjectKey{Name: ref.Name}}, ownerBatch)
	}
	b := ctrl.NewControllerManagedBy(mgr).Named(strings.ToLower(r.kind.Kind)).For(r.kind.NewBlueprint()).
		// An owner's change moves its blueprint's rollout, if it has one: one decision for
		// the owners' changes of an ownerBatch.
		Watches(r.kind.Owner().New(), handler.Funcs{
			CreateFunc: func(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[ctrl.Request]) {
				enqueue(ctx, e.Object, q)
			},
			UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[ctrl.Request]) {
				enqueue(ctx, e.ObjectNew, q)
			},
			DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[ctrl.Request]) {
				enqueue(ctx, e.Object, q)
			},
		})
	for _, tk := range v1alpha1.TemplateKinds {
		kind := tk.Kind
		b = b.Watches(tk.New(), handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []ctrl.Request {
			var reqs []ctrl.Request
			for _, bp := range blueprintsUsing(ctx, r.client, r.kind, kind, o.GetName()) {
				reqs = append(reqs, ctrl.Request{NamespacedName: client.ObjectKey{Name: bp.Name}})
			}
			return reqs
		}), builder.WithPredicates(predicate.GenerationChangedPredicate{}))
	}
	return b.Complete(r)
}

// Reconcile computes the blueprint's status from the templates it references.
func (r *BlueprintReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := r.kind.NewBlueprint()
	if err := r.client.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	bp := render.BlueprintOf(obj)
	templates, missing, err := render.TemplatesOf(bp, func(ref render.TemplateRef) (v1alpha1.Template, error) {
		tpl, err := render.NewTemplate(ref.Kind)
		if err != nil {
			return nil, err
		}
		return tpl, r.client.Get(ctx, client.ObjectKey{Name: ref.Name}, tpl)
	})
	if err != nil {
		return ctrl.Result{}, err
	}
	now := r.now()
	var plan *rolloutDecision
	if bp.Strategy != nil {
		var err error
		if plan, err = r.decideRollout(ctx, obj, bp, templates, len(missing) == 0, now.Time); err != nil {
			return ctrl.Result{}, err
		}
	} else {
		// The strategy is gone: its records go first, before the status that says so. Not
		// only while the status still has a rollout: a blueprint replaced (deleted and created
		// again) without its strategy has no status, and its owners keep their records.
		// forgetRollout writes nothing when no owner has one.
		if err := r.forgetRollout(ctx, bp); errors.Is(err, errStaleOwner) {
			// The owner's newer copy re-queues this blueprint only while it has a record, and
			// the record may be what changed: look again shortly either way.
			return ctrl.Result{RequeueAfter: conflictRetry}, nil
		} else if err != nil {
			return ctrl.Result{}, err
		}
	}
	prev := bp.Status.DeepCopy()
	bp.Status.ObservedGeneration = bp.Generation
	bp.Status.Conditions = mergeConditions(prev.Conditions, append(render.BlueprintConditions(missing, bp.Generation), rolloutConditions(plan, bp.Generation)...), now)
	bp.Status.Rollout = nil
	if plan != nil {
		bp.Status.Rollout = &plan.Status
	}
	if !equality.Semantic.DeepEqual(prev, bp.Status) {
		// Written whole with the resourceVersion it was computed from, as every status is
		// (statusWriter): a decision made from a stale copy loses to a newer one instead of
		// overwriting it, recording its events twice or pinning an owner.
		if err := r.status.update(ctx, obj); err != nil {
			if apierrors.IsConflict(err) {
				// The newer copy's event re-queues the blueprint; look again shortly as well,
				// as the owner reconciler does.
				return ctrl.Result{RequeueAfter: conflictRetry}, nil
			}
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
		if plan != nil {
			for _, e := range plan.Events {
				kind := corev1.EventTypeNormal
				if e.Warning {
					kind = corev1.EventTypeWarning
				}
				r.recorder.Event(obj, kind, e.Reason, e.Message)
			}
		}
	}
	if plan != nil {
		if err := r.carryOut(ctx, bp, plan); errors.Is(err, errStaleOwner) {
			return ctrl.Result{}, nil // the owner's newer copy re-queues the blueprint
		} else if err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{RequeueAfter: nextCheck(plan, now.Time)}, nil
}
