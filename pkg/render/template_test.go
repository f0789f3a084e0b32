package render

import (
	"testing"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// TestRuleProblemNamesTheField checks the template status message for an invalid health rule in
// both spellings: it names the field the template wrote, as tests/kuttl/health/health-rule-alias
// and tests/corpus/cases/02-jsonpath-messagepath-unparseable expect, word for word.
func TestRuleProblemNamesTheField(t *testing.T) {
	rule := &v1alpha1.HealthRule{MultiMatch: &v1alpha1.MultiMatchRule{
		Healthy: v1alpha1.MatchRule{MatchConditions: []v1alpha1.ConditionRequirement{{Type: "Ready", Status: "True"}}},
		Unhealthy: v1alpha1.MatchRule{MatchFields: []v1alpha1.HealthMatchFieldSelectorRequirement{{
			FieldSelectorRequirement: v1alpha1.FieldSelectorRequirement{Key: "status.phase", Operator: "In", Values: []string{"Failed"}},
			MessagePath:              `.status.conditions[?(@.type=="Ready").message`,
		}}},
	}}
	const problem = `.multiMatch.unhealthy.matchFields[0].messagePath: invalid jsonpath ".status.conditions[?(@.type==\"Ready\").message": unclosed array expect ]`
	for _, tt := range []struct {
		name string
		spec v1alpha1.TemplateSpec
		want string
	}{
		{"healthRule", v1alpha1.TemplateSpec{HealthRule: rule}, "invalid healthRule" + problem},
		{"healthyConditionRule", v1alpha1.TemplateSpec{HealthyConditionRule: rule}, "invalid healthyConditionRule" + problem},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := RuleProblem(&tt.spec)
			if c == nil || c.Reason != v1alpha1.ReasonInvalidHealthRule || c.Message != tt.want {
				t.Fatalf("ruleProblem = %+v, want InvalidHealthRule %q", c, tt.want)
			}
		})
	}
}
