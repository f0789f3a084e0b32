package health_test

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/surveyor-dev/surveyor/internal/fixtures"
	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/expr"
	"github.com/surveyor-dev/surveyor/pkg/health"
)

// appYAML is an object with conditions, numbers, booleans, a null and a list of values.
const appYAML = fixtures.AppYAML

func conditions(reqs ...string) []v1alpha1.ConditionRequirement {
	var out []v1alpha1.ConditionRequirement
	for i := 0; i+1 < len(reqs); i += 2 {
		out = append(out, v1alpha1.ConditionRequirement{Type: reqs[i], Status: metav1.ConditionStatus(reqs[i+1])})
	}
	return out
}

func fields(f ...v1alpha1.HealthMatchFieldSelectorRequirement) []v1alpha1.HealthMatchFieldSelectorRequirement {
	return f
}

func TestEvaluateMultiMatch(t *testing.T) {
	never := v1alpha1.MatchRule{MatchConditions: conditions("Never", "True")}
	tests := []struct {
		name      string
		healthy   v1alpha1.MatchRule
		unhealthy v1alpha1.MatchRule
		want      metav1.Condition
	}{
		// matchConditions
		{"healthy condition",
			v1alpha1.MatchRule{MatchConditions: conditions("ReconcileSucceeded", "True")}, never,
			healthyCond("True", "MatchedCondition", "condition status: True, message: reconciled")},
		{"unhealthy condition wins over healthy",
			v1alpha1.MatchRule{MatchConditions: conditions("ReconcileSucceeded", "True")},
			v1alpha1.MatchRule{MatchConditions: conditions("ReconcileFailed", "False")},
			healthyCond("False", "MatchedCondition", "condition status: False, message: not failed")},
		{"any unhealthy matcher decides",
			v1alpha1.MatchRule{MatchConditions: conditions("ReconcileSucceeded", "True")},
			v1alpha1.MatchRule{MatchConditions: conditions("Missing", "True", "Stalled", "Unknown")},
			healthyCond("False", "MatchedCondition", "condition status: Unknown, message: who knows")},
		{"all healthy matchers must hold",
			v1alpha1.MatchRule{MatchConditions: conditions("ReconcileSucceeded", "True", "ReconcileFailed", "True")}, never,
			healthyCond("Unknown", "NoMatchesFulfilled", "no healthy or unhealthy matchers were fulfilled; first unfulfilled healthy matcher: matchConditions[1]: condition [ReconcileFailed] is not True")},
		{"missing healthy condition",
			v1alpha1.MatchRule{MatchConditions: conditions("Ready", "True")}, never,
			healthyCond("Unknown", "NoMatchesFulfilled", "no healthy or unhealthy matchers were fulfilled; first unfulfilled healthy matcher: matchConditions[0]: condition [Ready] is not True")},
		{"first healthy matcher gives reason and message",
			v1alpha1.MatchRule{
				MatchConditions: conditions("ReconcileFailed", "False", "ReconcileSucceeded", "True"),
				MatchFields:     fields(field("status.phase", "In", "Running")),
				MatchCEL:        []v1alpha1.CELMatch{{Expression: "object.status.ready"}},
			}, never,
			healthyCond("True", "MatchedCondition", "condition status: False, message: not failed")},
		{"conditions are checked before fields before expressions on the unhealthy side",
			v1alpha1.MatchRule{MatchConditions: conditions("ReconcileSucceeded", "True")},
			v1alpha1.MatchRule{
				MatchCEL:        []v1alpha1.CELMatch{{Expression: "true"}},
				MatchFields:     fields(field("status.phase", "Exists")),
				MatchConditions: conditions("Stalled", "Unknown"),
			},
			healthyCond("False", "MatchedCondition", "condition status: Unknown, message: who knows")},

		// matchFields
		{"field In with messagePath (the RFC's kapp example)",
			v1alpha1.MatchRule{MatchConditions: conditions("ReconcileSucceeded", "True")},
			v1alpha1.MatchRule{MatchFields: fields(withMessage(
				field(`status.conditions[?(@.type=="ReconcileSucceeded")].status`, "In", "True"), ".status.usefulErrorMessage"))},
			healthyCond("False", "MatchedField", "field value: True, message: kapp deploy failed")},
		{"field Exists on an empty map (the RFC's Service example)",
			v1alpha1.MatchRule{MatchFields: fields(field(".status.loadBalancer", "Exists"))},
			v1alpha1.MatchRule{MatchFields: fields(field(".status.loadBalancer", "DoesNotExist"))},
			healthyCond("True", "MatchedField", "field value: {}, message: ")},
		{"empty messagePath gives an empty message part",
			v1alpha1.MatchRule{MatchFields: fields(field("{.status.phase}", "In", "Running"))}, never,
			healthyCond("True", "MatchedField", "field value: Running, message: ")},
		{"messagePath that cannot be read gives an empty message part",
			v1alpha1.MatchRule{MatchFields: fields(withMessage(field("status.phase", "In", "Running"), "status.nothing"))}, never,
			healthyCond("True", "MatchedField", "field value: Running, message: ")},
		{"number In",
			v1alpha1.MatchRule{MatchFields: fields(field("status.replicas", "In", "2", "3"))}, never,
			healthyCond("True", "MatchedField", "field value: 3, message: ")},
		{"float In",
			v1alpha1.MatchRule{MatchFields: fields(field("status.ratio", "In", "2.5"))}, never,
			healthyCond("True", "MatchedField", "field value: 2.5, message: ")},
		{"boolean In",
			v1alpha1.MatchRule{MatchFields: fields(field("status.ready", "In", "true"))}, never,
			healthyCond("True", "MatchedField", "field value: true, message: ")},
		{"number NotIn",
			v1alpha1.MatchRule{MatchConditions: conditions("ReconcileSucceeded", "True")},
			v1alpha1.MatchRule{MatchFields: fields(field("status.replicas", "NotIn", "3"))},
			healthyCond("True", "MatchedCondition", "condition status: True, message: reconciled")},
		{"boolean NotIn matches",
			v1alpha1.MatchRule{MatchConditions: conditions("ReconcileSucceeded", "True")},
			v1alpha1.MatchRule{MatchFields: fields(field("status.paused", "NotIn", "true"))},
			healthyCond("False", "MatchedField", "field value: false, message: ")},
		{"missing field never matches In",
			v1alpha1.MatchRule{MatchFields: fields(field("status.missing", "In", ""))}, never,
			healthyCond("Unknown", "NoMatchesFulfilled", "no healthy or unhealthy matchers were fulfilled; first unfulfilled healthy matcher: matchFields[0]: key [status.missing] operator In")},
		{"missing field never matches NotIn",
			v1alpha1.MatchRule{MatchFields: fields(field("status.missing.deeper", "NotIn", "x"))}, never,
			healthyCond("Unknown", "NoMatchesFulfilled", "no healthy or unhealthy matchers were fulfilled; first unfulfilled healthy matcher: matchFields[0]: key [status.missing.deeper] operator NotIn")},
		{"missing field matches DoesNotExist",
			v1alpha1.MatchRule{MatchFields: fields(field("status.missing.deeper", "DoesNotExist"))}, never,
			healthyCond("True", "MatchedField", "field value: <none>, message: ")},
		{"null field does not exist",
			v1alpha1.MatchRule{MatchConditions: conditions("ReconcileSucceeded", "True")},
			v1alpha1.MatchRule{MatchFields: fields(field("status.gone", "Exists"))},
			healthyCond("True", "MatchedCondition", "condition status: True, message: reconciled")},
		{"null field matches DoesNotExist",
			v1alpha1.MatchRule{MatchFields: fields(field("status.gone", "DoesNotExist"))}, never,
			healthyCond("True", "MatchedField", "field value: <none>, message: ")},
		{"filter that selects nothing does not exist",
			v1alpha1.MatchRule{MatchFields: fields(field(`status.conditions[?(@.type=="Ready")].status`, "DoesNotExist"))}, never,
			healthyCond("True", "MatchedField", "field value: <none>, message: ")},
		{"several values: In matches any and reports it",
			v1alpha1.MatchRule{MatchFields: fields(field("status.tags[*]", "In", "green"))}, never,
			healthyCond("True", "MatchedField", "field value: green, message: ")},
		{"several values: NotIn needs every value outside",
			v1alpha1.MatchRule{MatchConditions: conditions("ReconcileSucceeded", "True")},
			v1alpha1.MatchRule{MatchFields: fields(field("status.tags[*]", "NotIn", "green"))},
			healthyCond("True", "MatchedCondition", "condition status: True, message: reconciled")},
		{"several values: Exists reports the first",
			v1alpha1.MatchRule{MatchFields: fields(field("status.conditions[*].type", "Exists"))}, never,
			healthyCond("True", "MatchedField", "field value: ReconcileSucceeded, message: ")},
		{"list value in its JSON form",
			v1alpha1.MatchRule{MatchFields: fields(field("status.tags", "In", `["blue","green"]`))}, never,
			healthyCond("True", "MatchedField", `field value: ["blue","green"], message: `)},
		{"invalid jsonpath in a rule that skipped validation",
			v1alpha1.MatchRule{MatchFields: fields(field("status.conditions[?(@.type==", "Exists"))}, never,
			healthyCond("Unknown", "InvalidHealthRule", `healthyConditionRule.multiMatch.healthy.matchFields[0].key: invalid jsonpath "status.conditions[?(@.type==": unterminated filter`)},

		// matchCEL
		{"expression without messageExpression reports itself",
			v1alpha1.MatchRule{MatchCEL: []v1alpha1.CELMatch{{Expression: `object.status.phase == "Running"`}}}, never,
			healthyCond("True", "MatchedExpression", `object.status.phase == "Running"`)},
		{"unhealthy expression with messageExpression",
			v1alpha1.MatchRule{MatchConditions: conditions("ReconcileSucceeded", "True")},
			v1alpha1.MatchRule{MatchCEL: []v1alpha1.CELMatch{{
				Expression:        `object.status.replicas > 2`,
				MessageExpression: `"too many replicas: " + string(object.status.replicas)`,
			}}},
			healthyCond("False", "MatchedExpression", "too many replicas: 3")},
		{"missing data is no match",
			v1alpha1.MatchRule{MatchCEL: []v1alpha1.CELMatch{{Expression: `object.status.missing == "x"`}}}, never,
			healthyCond("Unknown", "NoMatchesFulfilled", `no healthy or unhealthy matchers were fulfilled; first unfulfilled healthy matcher: matchCEL[0]: "object.status.missing == \"x\"" is false`)},
		{"false expression",
			v1alpha1.MatchRule{MatchCEL: []v1alpha1.CELMatch{{Expression: `object.status.ready && object.status.paused`}}}, never,
			healthyCond("Unknown", "NoMatchesFulfilled", `no healthy or unhealthy matchers were fulfilled; first unfulfilled healthy matcher: matchCEL[0]: "object.status.ready && object.status.paused" is false`)},
		{"evaluation error is Unknown and quotes the expression",
			v1alpha1.MatchRule{MatchCEL: []v1alpha1.CELMatch{{Expression: `object.status.replicas / 0 == 1`}}}, never,
			healthyCond("Unknown", "HealthRuleEvaluationFailed", `healthyConditionRule.multiMatch.healthy.matchCEL[0].expression: expression "object.status.replicas / 0 == 1": division by zero`)},
		{"non-bool result is an error",
			v1alpha1.MatchRule{MatchCEL: []v1alpha1.CELMatch{{Expression: `object.status.phase`}}}, never,
			healthyCond("Unknown", "HealthRuleEvaluationFailed", `healthyConditionRule.multiMatch.healthy.matchCEL[0].expression: expression "object.status.phase": must evaluate to bool, but evaluated to string`)},
		{"an unhealthy match still decides when another unhealthy matcher fails",
			v1alpha1.MatchRule{MatchConditions: conditions("ReconcileSucceeded", "True")},
			v1alpha1.MatchRule{MatchCEL: []v1alpha1.CELMatch{{Expression: `object.status.phase`}, {Expression: `object.status.ready`}}},
			healthyCond("False", "MatchedExpression", "object.status.ready")},
		{"an unhealthy matcher that fails blocks a healthy verdict",
			v1alpha1.MatchRule{MatchConditions: conditions("ReconcileSucceeded", "True")},
			v1alpha1.MatchRule{MatchCEL: []v1alpha1.CELMatch{{Expression: `int(object.status.phase) > 0`}}},
			healthyCond("Unknown", "HealthRuleEvaluationFailed", `healthyConditionRule.multiMatch.unhealthy.matchCEL[0].expression: expression "int(object.status.phase) > 0": type conversion error from 'string' to 'int'`)},
		{"expression that does not compile",
			v1alpha1.MatchRule{MatchCEL: []v1alpha1.CELMatch{{Expression: `object.status.(`}}}, never,
			healthyCond("Unknown", "InvalidHealthRule", "healthyConditionRule.multiMatch.healthy.matchCEL[0].expression: expression \"object.status.(\": ERROR: <input>:1:15: Syntax error: no viable alternative at input '.('\n | object.status.(\n | ..............^")},
		{"failing messageExpression keeps the verdict",
			v1alpha1.MatchRule{MatchCEL: []v1alpha1.CELMatch{{Expression: `true`, MessageExpression: `object.status.missing`}}}, never,
			healthyCond("True", "MatchedExpression", `true (messageExpression failed: expression "object.status.missing": no such key: missing)`)},
	}
	obj := object(t, appYAML)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := health.Evaluate(health.Input{Rule: multiMatch(tt.healthy, tt.unhealthy), Object: obj, HasOutputs: true})
			assertCondition(t, tt.want, got)
		})
	}
}

func TestEvaluateMultiMatchBudget(t *testing.T) {
	obj := object(t, appYAML)
	rule := multiMatch(
		v1alpha1.MatchRule{MatchCEL: []v1alpha1.CELMatch{{Expression: `object.status.tags.all(t, t.size() > 0)`}}},
		v1alpha1.MatchRule{MatchCEL: []v1alpha1.CELMatch{{Expression: `object.status.tags.exists(t, t == "red")`}}},
	)
	t.Run("fresh scope", func(t *testing.T) {
		got := health.Evaluate(health.Input{Rule: rule, Object: obj, Scope: expr.NewScope(obj.Object)})
		assertCondition(t, healthyCond("True", "MatchedExpression", "object.status.tags.all(t, t.size() > 0)"), got)
	})
	t.Run("exhausted scope", func(t *testing.T) {
		scope := expr.NewScopeWithBudget(obj.Object, 5)
		got := health.Evaluate(health.Input{Rule: rule, Object: obj, Scope: scope})
		assertCondition(t, healthyCond("Unknown", "HealthRuleEvaluationFailed",
			`healthyConditionRule.multiMatch.unhealthy.matchCEL[0].expression: expression "object.status.tags.exists(t, t == \"red\")": the expressions for this object used up their cost budget of 5`), got)
		if scope.Remaining() != 0 {
			t.Errorf("remaining budget %d, want 0", scope.Remaining())
		}
	})
	// The two per-call limits stop an expression, whatever it is: cel-go's cost tracker, and the
	// time limit (cel-go's tracker is quadratic in the length of a comprehension, so the second
	// expression costs only 400,004 but would run for half a minute).
	for _, tt := range []struct{ name, expression, detail string }{
		{"over the per-call cost limit", `lists.range(1000).sort().size() > 0`, "cost limit of 1000000 exceeded by one evaluation"},
		{"over the per-call time limit", `lists.range(100000).all(i, true)`, "evaluation stopped after 100ms"},
		// A call that would allocate in proportion to its argument is refused before it runs,
		// and the condition names the limit (DESIGN §12).
		{"over a call's size limit", `lists.range(50000000).size() > 0`,
			"lists.range(50000000) would make a list of 50000000 elements, over the limit of 100000"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			heavy := multiMatch(
				v1alpha1.MatchRule{MatchCEL: []v1alpha1.CELMatch{{Expression: tt.expression}}},
				v1alpha1.MatchRule{MatchConditions: conditions("Never", "True")},
			)
			start := time.Now()
			got := health.Evaluate(health.Input{Rule: heavy, Object: obj})
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("took %s", took)
			}
			assertCondition(t, healthyCond("Unknown", "HealthRuleEvaluationFailed",
				fmt.Sprintf("healthyConditionRule.multiMatch.healthy.matchCEL[0].expression: expression %q: %s", tt.expression, tt.detail)), got)
		})
	}
}
