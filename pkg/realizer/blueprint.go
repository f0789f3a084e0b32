package realizer

import (
	"context"
	"errors"
	"fmt"
	"slices"
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
)

// BlueprintReconciler reports whether a blueprint's templates exist: conditions
// TemplatesReady and Ready. With a rolloutStrategy it also runs the blueprint's rollout
// (rollout.go). One instance serves each blueprint kind (ClusterSupplyChain,
// ClusterDelivery).
type BlueprintReconciler struct {
	client   client.Client
	kind     *blueprintKind
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
		ref := o.(v1alpha1.Owner).GetBlueprintRef()
		if ref == nil || ref.Kind != r.kind.kind {
			return
		}
		bp := r.kind.newObject()
		if r.client.Get(ctx, client.ObjectKey{Name: ref.Name}, bp) != nil || r.kind.of(bp).strategy == nil {
			return
		}
		q.AddAfter(ctrl.Request{NamespacedName: client.ObjectKey{Name: ref.Name}}, ownerBatch)
	}
	b := ctrl.NewControllerManagedBy(mgr).Named(strings.ToLower(r.kind.kind)).For(r.kind.newObject()).
		// An owner's change moves its blueprint's rollout, if it has one: one decision for
		// the owners' changes of an ownerBatch.
		Watches(r.ownerKind().newObject(), handler.Funcs{
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
	for kind, newObj := range templateKinds {
		b = b.Watches(newObj(), handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []ctrl.Request {
			var reqs []ctrl.Request
			for _, bp := range blueprintsUsing(ctx, r.client, r.kind, kind, o.GetName()) {
				reqs = append(reqs, ctrl.Request{NamespacedName: client.ObjectKey{Name: bp.name}})
			}
			return reqs
		}), builder.WithPredicates(predicate.GenerationChangedPredicate{}))
	}
	return b.Complete(r)
}

// Reconcile computes the blueprint's status from the templates it references.
func (r *BlueprintReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := r.kind.newObject()
	if err := r.client.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	orig := obj.DeepCopyObject().(client.Object)
	bp := r.kind.of(obj)
	templates, missing, err := templatesOf(bp, func(ref templateRef) (client.Object, error) {
		tpl, err := newTemplate(ref.kind)
		if err != nil {
			return nil, err
		}
		return tpl, r.client.Get(ctx, client.ObjectKey{Name: ref.name}, tpl)
	})
	if err != nil {
		return ctrl.Result{}, err
	}
	now := r.now()
	var plan *rolloutDecision
	if bp.strategy != nil {
		var err error
		if plan, err = r.decideRollout(ctx, obj, bp, templates, len(missing) == 0, now.Time); err != nil {
			return ctrl.Result{}, err
		}
	}
	prev := bp.status.DeepCopy()
	bp.status.ObservedGeneration = bp.generation
	bp.status.Conditions = mergeConditions(prev.Conditions, append(blueprintConditions(missing, bp.generation), rolloutConditions(plan, bp.generation)...), now)
	bp.status.Rollout = nil
	if plan != nil {
		bp.status.Rollout = &plan.Status
	}
	if !equality.Semantic.DeepEqual(prev, bp.status) {
		// The optimistic lock keeps a decision made from a stale copy from overwriting a newer
		// one, recording its events twice or pinning an owner; the newer copy's event re-queues.
		if err := r.client.Status().Patch(ctx, obj, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
			if apierrors.IsConflict(err) {
				return ctrl.Result{}, nil
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

// templatesOf reads each template the blueprint references once, with get, and names
// the resources whose template does not exist (get says not found, or the kind is no
// template kind), in spec order. Any other error from get is returned.
func templatesOf(bp *blueprint, get func(templateRef) (client.Object, error)) (templates []client.Object, missing []string, err error) {
	seen := map[templateRef]bool{}
	for _, ref := range bp.templateRefs() {
		if slices.Contains(missing, ref.resource) || seen[ref.template] {
			continue
		}
		tpl, err := get(ref.template)
		if err != nil {
			if !apierrors.IsNotFound(err) && !errors.Is(err, errUnknownTemplateKind) {
				return nil, nil, err
			}
			missing = append(missing, ref.resource)
			continue
		}
		seen[ref.template] = true
		templates = append(templates, tpl)
	}
	return templates, missing, nil
}

// blueprintConditions is TemplatesReady and Ready, given the resources whose template is
// missing, named in Cartographer's words.
func blueprintConditions(missing []string, generation int64) []metav1.Condition {
	ready := metav1.Condition{
		Type: v1alpha1.ConditionTemplatesReady, Status: metav1.ConditionTrue,
		Reason: v1alpha1.ReasonReady, ObservedGeneration: generation,
	}
	if len(missing) > 0 {
		ready.Status, ready.Reason = metav1.ConditionFalse, v1alpha1.ReasonTemplatesNotFound
		ready.Message = fmt.Sprintf("did not find the template of the resource(s) [%s]", strings.Join(missing, ", "))
	}
	top := ready
	top.Type = v1alpha1.ConditionReady
	return []metav1.Condition{ready, top}
}
