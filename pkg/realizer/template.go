package realizer

import (
	"context"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/health"
	"github.com/surveyor-dev/surveyor/pkg/workitems"
)

// TemplateReconciler reports on a template of one kind whether its rules can be
// used: Ready, or Ready=False InvalidHealthRule or InvalidConditionRule naming the
// bad path or expression.
type TemplateReconciler struct {
	Client client.Client
	Kind   string
}

// SetupWithManager registers the reconciler for its kind.
func (r *TemplateReconciler) SetupWithManager(mgr ctrl.Manager) error {
	obj, err := newTemplate(r.Kind)
	if err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).Named(strings.ToLower(r.Kind)).For(obj).Complete(r)
}

// Reconcile validates the template's rules and writes its status if it changed.
func (r *TemplateReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj, err := newTemplate(r.Kind)
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := r.Client.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	orig := obj.DeepCopyObject().(client.Object)
	t := templateOf(obj)
	ready := metav1.Condition{Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonReady, ObservedGeneration: obj.GetGeneration()}
	if problem := ruleProblem(t.spec); problem != nil {
		ready.Status, ready.Reason, ready.Message = metav1.ConditionFalse, problem.Reason, problem.Message
	}
	prev := t.status.DeepCopy()
	t.status.ObservedGeneration = obj.GetGeneration()
	t.status.Conditions = mergeConditions(prev.Conditions, []metav1.Condition{ready}, metav1.Now())
	if equality.Semantic.DeepEqual(prev, t.status) {
		return ctrl.Result{}, nil
	}
	return ctrl.Result{}, client.IgnoreNotFound(r.Client.Status().Patch(ctx, obj, client.MergeFrom(orig)))
}

// ruleProblem says what makes a template's rules unusable, as a reason and message,
// or nil. The message names the field as the template spells it (healthRule is
// Cartographer's name for healthyConditionRule).
func ruleProblem(spec *v1alpha1.TemplateSpec) *metav1.Condition {
	if err := health.Validate(health.RuleOf(spec)); err != nil {
		return &metav1.Condition{Reason: v1alpha1.ReasonInvalidHealthRule, Message: "invalid " + err.Error()}
	}
	if err := workitems.Validate(spec.ConditionRules); err != nil {
		return &metav1.Condition{Reason: v1alpha1.ReasonInvalidConditionRule, Message: "invalid " + err.Error()}
	}
	return nil
}
