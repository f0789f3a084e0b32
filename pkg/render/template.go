package render

import (
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/health"
	"github.com/surveyor-dev/surveyor/pkg/workitems"
)

// Template is what the pipeline needs of any template kind: its shared spec and the
// jsonpath of each output it declares.
type Template struct {
	Kind    string
	Name    string
	Spec    *v1alpha1.TemplateSpec
	Outputs []v1alpha1.OutputPath
	Status  *v1alpha1.TemplateStatus
	// Deployment is set for a ClusterDeploymentTemplate, whose outputs pass its
	// deployment input through once its object succeeded.
	Deployment *v1alpha1.ClusterDeploymentTemplateSpec
}

// ErrUnknownTemplateKind is a templateRef kind that is no template kind.
var ErrUnknownTemplateKind = errors.New("unknown template kind")

// NewTemplate makes an empty template of the kind named kind.
func NewTemplate(kind string) (v1alpha1.Template, error) {
	k := v1alpha1.TemplateKindNamed(kind)
	if k == nil {
		return nil, fmt.Errorf("%w %q", ErrUnknownTemplateKind, kind)
	}
	return k.NewTemplate(), nil
}

// TemplateOf views a template object of any kind as a Template.
func TemplateOf(obj v1alpha1.Template) Template {
	t := Template{
		Kind: v1alpha1.TemplateKindOf(obj).Kind, Name: obj.GetName(),
		Spec: obj.GetTemplateSpec(), Status: obj.GetTemplateStatus(), Outputs: obj.GetOutputPaths(),
	}
	if d, ok := obj.(*v1alpha1.ClusterDeploymentTemplate); ok {
		t.Deployment = &d.Spec
	}
	return t
}

// RuleProblem says what makes a template's rules unusable, as a reason and message, or
// nil. The message names the field as the template spells it (healthRule is
// Cartographer's name for healthyConditionRule).
func RuleProblem(spec *v1alpha1.TemplateSpec) *metav1.Condition {
	if err := health.Validate(health.RuleOf(spec)); err != nil {
		return &metav1.Condition{Reason: v1alpha1.ReasonInvalidHealthRule, Message: "invalid " + err.Error()}
	}
	if err := workitems.Validate(spec.ConditionRules); err != nil {
		return &metav1.Condition{Reason: v1alpha1.ReasonInvalidConditionRule, Message: "invalid " + err.Error()}
	}
	return nil
}

// unusable is ResourceSubmitted for a template whose rules cannot be used, or nil.
func unusable(tpl Template) *metav1.Condition {
	problem := RuleProblem(tpl.Spec)
	if problem == nil {
		return nil
	}
	c := Submitted(metav1.ConditionFalse, problem.Reason, "template [%s/%s] cannot be used: %s", tpl.Kind, tpl.Name, problem.Message)
	return &c
}
