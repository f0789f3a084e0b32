package realizer

import (
	"context"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/render"
)

// TemplateReconciler reports on a template of one kind whether its rules can be
// used: Ready, or Ready=False InvalidHealthRule or InvalidConditionRule naming the
// bad path or expression.
type TemplateReconciler struct {
	client client.Client
	kind   *v1alpha1.TemplateKind
	status statusWriter
}

// SetupWithManager registers the reconciler for its kind.
func (r *TemplateReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named(r.kind.Singular()).For(r.kind.New()).Complete(r)
}

// Reconcile validates the template's rules and writes its status if it changed.
func (r *TemplateReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := r.kind.NewTemplate()
	if err := r.client.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	t := render.TemplateOf(obj)
	ready := metav1.Condition{Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonReady, ObservedGeneration: obj.GetGeneration()}
	if problem := render.RuleProblem(t.Spec); problem != nil {
		ready.Status, ready.Reason, ready.Message = metav1.ConditionFalse, problem.Reason, problem.Message
	}
	prev := t.Status.DeepCopy()
	t.Status.ObservedGeneration = obj.GetGeneration()
	t.Status.Conditions = mergeConditions(prev.Conditions, []metav1.Condition{ready}, metav1.Now())
	if equality.Semantic.DeepEqual(prev, t.Status) {
		return ctrl.Result{}, nil
	}
	// Written whole with the resourceVersion it was computed from (statusWriter): a status
	// computed from a stale copy loses to the newer one, whose event re-queues the template.
	if err := r.status.update(ctx, obj); apierrors.IsConflict(err) {
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	} else if err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	return ctrl.Result{}, nil
}
