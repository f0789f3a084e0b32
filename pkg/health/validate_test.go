package health_test

import (
	"errors"
	"testing"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/expr"
	"github.com/surveyor-dev/surveyor/pkg/health"
)

func TestValidate(t *testing.T) {
	okSide := v1alpha1.MatchRule{MatchConditions: conditions("Ready", "True")}
	tests := []struct {
		name    string
		rule    *v1alpha1.HealthRule
		wantErr string
	}{
		{"no rule", nil, ""},
		{"alwaysHealthy", &v1alpha1.HealthRule{AlwaysHealthy: &v1alpha1.AlwaysHealthyRule{}}, ""},
		{"singleConditionType", &v1alpha1.HealthRule{SingleConditionType: "Ready"}, ""},
		{"valid multiMatch", multiMatch(
			v1alpha1.MatchRule{
				MatchFields: fields(withMessage(field(`status.conditions[?(@.type=="Ready")].status`, "In", "True"), "{.status.message}")),
				MatchCEL:    []v1alpha1.CELMatch{{Expression: "object.status.ready", MessageExpression: `"ready: " + object.metadata.name`}},
			}, okSide), ""},
		{"no form", &v1alpha1.HealthRule{},
			"healthyConditionRule: exactly one of alwaysHealthy, singleConditionType or multiMatch must be set, found 0"},
		{"two forms", &v1alpha1.HealthRule{SingleConditionType: "Ready", AlwaysHealthy: &v1alpha1.AlwaysHealthyRule{}},
			"healthyConditionRule: exactly one of alwaysHealthy, singleConditionType or multiMatch must be set, found 2"},
		{"empty side", multiMatch(okSide, v1alpha1.MatchRule{}),
			"healthyConditionRule.multiMatch.unhealthy: must set at least one of matchConditions, matchFields or matchCEL"},
		{"bad jsonpath key", multiMatch(v1alpha1.MatchRule{MatchFields: fields(field("status.x[", "Exists"))}, okSide),
			`healthyConditionRule.multiMatch.healthy.matchFields[0].key: invalid jsonpath "status.x[": unterminated array`},
		{"bad messagePath", multiMatch(okSide, v1alpha1.MatchRule{MatchFields: fields(
			field("status.a", "Exists"), withMessage(field("status.b", "Exists"), "{.status"))}),
			`healthyConditionRule.multiMatch.unhealthy.matchFields[1].messagePath: invalid jsonpath "{.status": unclosed action`},
		{"values for In", multiMatch(okSide, v1alpha1.MatchRule{MatchFields: fields(field("status.a", "In"))}),
			"healthyConditionRule.multiMatch.unhealthy.matchFields[0].values: must be set when operator is In"},
		{"no values for Exists", multiMatch(okSide, v1alpha1.MatchRule{MatchFields: fields(field("status.a", "Exists", "x"))}),
			"healthyConditionRule.multiMatch.unhealthy.matchFields[0].values: must not be set when operator is Exists"},
		{"unknown operator", multiMatch(okSide, v1alpha1.MatchRule{MatchFields: fields(field("status.a", "Equals", "x"))}),
			`healthyConditionRule.multiMatch.unhealthy.matchFields[0].operator: must be In, NotIn, Exists or DoesNotExist, not "Equals"`},
		{"bad condition status", multiMatch(v1alpha1.MatchRule{MatchConditions: conditions("Ready", "true")}, okSide),
			`healthyConditionRule.multiMatch.healthy.matchConditions[0].status: must be True, False or Unknown, not "true"`},
		{"CEL that does not compile", multiMatch(v1alpha1.MatchRule{MatchCEL: []v1alpha1.CELMatch{{Expression: "object.status.("}}}, okSide),
			"healthyConditionRule.multiMatch.healthy.matchCEL[0].expression: expression \"object.status.(\": ERROR: <input>:1:15: Syntax error: no viable alternative at input '.('\n | object.status.(\n | ..............^"},
		{"CEL that is not bool", multiMatch(okSide, v1alpha1.MatchRule{MatchCEL: []v1alpha1.CELMatch{{Expression: "size(object.status)"}}}),
			`healthyConditionRule.multiMatch.unhealthy.matchCEL[0].expression: expression "size(object.status)": must evaluate to bool, but has type int`},
		{"messageExpression that is not a string", multiMatch(okSide, v1alpha1.MatchRule{MatchCEL: []v1alpha1.CELMatch{{Expression: "true", MessageExpression: "1"}}}),
			`healthyConditionRule.multiMatch.unhealthy.matchCEL[0].messageExpression: expression "1": must evaluate to string, but has type int`},
		{"every problem is reported", multiMatch(
			v1alpha1.MatchRule{MatchFields: fields(field("status.x[", "Exists"))},
			v1alpha1.MatchRule{MatchCEL: []v1alpha1.CELMatch{{Expression: "1"}}}),
			`healthyConditionRule.multiMatch.healthy.matchFields[0].key: invalid jsonpath "status.x[": unterminated array; ` +
				`healthyConditionRule.multiMatch.unhealthy.matchCEL[0].expression: expression "1": must evaluate to bool, but has type int`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := health.Validate(tt.rule, health.FieldHealthyConditionRule)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || err.Error() != tt.wantErr {
				t.Fatalf("error:\n%v\nwant:\n%s", err, tt.wantErr)
			}
			var invalid *health.InvalidRuleError
			if !errors.As(err, &invalid) || len(invalid.Fields) == 0 {
				t.Errorf("error %T is not an *InvalidRuleError with fields", err)
			}
		})
	}
}

func TestValidateErrorsUnwrap(t *testing.T) {
	err := health.Validate(multiMatch(
		v1alpha1.MatchRule{MatchCEL: []v1alpha1.CELMatch{{Expression: "object.("}}},
		v1alpha1.MatchRule{MatchConditions: conditions("Ready", "True")}), "")
	if !errors.Is(err, expr.ErrInvalidExpression) {
		t.Errorf("errors.Is(%v, ErrInvalidExpression) = false", err)
	}
	var field *health.FieldError
	if !errors.As(err, &field) || field.Path != "healthyConditionRule.multiMatch.healthy.matchCEL[0].expression" {
		t.Errorf("errors.As FieldError: %+v", field)
	}
}

// TestRuleFieldNamesWhatTheUserWrote shows messages about a rule naming the field the template
// wrote it in, healthRule (Cartographer's) or healthyConditionRule, in Validate and Evaluate.
func TestRuleFieldNamesWhatTheUserWrote(t *testing.T) {
	bad := multiMatch(
		v1alpha1.MatchRule{MatchFields: fields(withMessage(field("status.phase", "Exists"), "{.status"))},
		v1alpha1.MatchRule{MatchCEL: []v1alpha1.CELMatch{{Expression: "int(object.status.phase) > 0"}}},
	)
	tests := []struct {
		name      string
		spec      v1alpha1.TemplateSpec
		wantField string
	}{
		{"healthyConditionRule", v1alpha1.TemplateSpec{HealthyConditionRule: bad}, health.FieldHealthyConditionRule},
		{"healthRule", v1alpha1.TemplateSpec{HealthRule: bad}, health.FieldHealthRule},
		{"both, healthyConditionRule wins", v1alpha1.TemplateSpec{HealthyConditionRule: bad, HealthRule: &v1alpha1.HealthRule{}}, health.FieldHealthyConditionRule},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rule, f := health.RuleOf(&tt.spec)
			if rule != bad || f != tt.wantField {
				t.Fatalf("RuleOf = %p, %q; want %p, %q", rule, f, bad, tt.wantField)
			}
			err := health.Validate(rule, f)
			want := tt.wantField + `.multiMatch.healthy.matchFields[0].messagePath: invalid jsonpath "{.status": unclosed action`
			if err == nil || err.Error() != want {
				t.Errorf("Validate: %v, want %q", err, want)
			}
			c := health.Evaluate(health.Input{Rule: rule, Field: f, Object: object(t, appYAML), HasOutputs: true})
			wantMsg := tt.wantField + `.multiMatch.unhealthy.matchCEL[0].expression: expression "int(object.status.phase) > 0": type conversion error from 'string' to 'int'`
			assertCondition(t, healthyCond("Unknown", "HealthRuleEvaluationFailed", wantMsg), c)
		})
	}
	if rule, f := health.RuleOf(&v1alpha1.TemplateSpec{Lifecycle: v1alpha1.LifecycleTekton}); rule.SingleConditionType != "Succeeded" || f != health.FieldHealthyConditionRule {
		t.Errorf("RuleOf(tekton) = %+v, %q", rule, f)
	}
}
