package workitems_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/expr"
	"github.com/surveyor-dev/surveyor/pkg/health"
	"github.com/surveyor-dev/surveyor/pkg/workitems"
)

func TestValidate(t *testing.T) {
	withMessage := func(r v1alpha1.ConditionRule, expr string) v1alpha1.ConditionRule {
		r.MessageExpression = expr
		return r
	}
	wkcWithExpr := wellKnownRule()
	wkcWithExpr.CELExpressions = []v1alpha1.CELConditionExpression{{Expression: "true"}}
	// problem is one expected field error: its path and parts of its message.
	type problem struct {
		path     string
		contains []string
	}
	tests := []struct {
		name  string
		rules []v1alpha1.ConditionRule
		want  []problem
	}{
		{name: "no rules", rules: nil},
		{name: "usable rules", rules: []v1alpha1.ConditionRule{
			wellKnownRule(),
			withMessage(wellKnownRule(), "'job ' + object.metadata.name"),
			celRule("Complete", "object.status.succeeded >= 1", "indexes(object.status.completedIndexes).size() >= 2"),
			celRule("Initialized", "object.status.conditions.exists(c, c.type == 'Initialized' && c.status == 'True')"),
			celRule("Counted", `{"status": true, "reason": "Counted", "message": "ok"}`),
			celRule("Counted", `object.status.count >= 4 ? {"reason": "CountReached"} : {"reason": "CountNotReached", "status": false}`),
			celRule("Optional", "object.status.?result"),
			celRule("Commented", "true // done"),
			celRule("example.com/Verified", "true"),
			withMessage(celRule("Complete", "true"), "object.status.message"),
		}},
		{name: "syntax error", rules: []v1alpha1.ConditionRule{celRule("Complete", "true", "object.status.(")},
			want: []problem{{"conditionRules[0].celExpressions[1].expression", []string{`expression "object.status.("`, "Syntax error"}}}},
		{name: "undeclared function", rules: []v1alpha1.ConditionRule{celRule("Complete", "nope(object)")},
			want: []problem{{"conditionRules[0].celExpressions[0].expression", []string{`expression "nope(object)"`, "undeclared reference"}}}},
		{name: "a string is neither bool nor map", rules: []v1alpha1.ConditionRule{celRule("Complete", "'done'")},
			want: []problem{{"conditionRules[0].celExpressions[0].expression",
				[]string{`expression "'done'": must evaluate to a bool or a map {status?, reason, message}`}}}},
		{name: "an int is neither bool nor map", rules: []v1alpha1.ConditionRule{celRule("Complete", "size(object.status)")},
			want: []problem{{"conditionRules[0].celExpressions[0].expression", []string{"must evaluate to a bool or a map"}}}},
		{name: "a list is neither bool nor map", rules: []v1alpha1.ConditionRule{celRule("Complete", "indexes('1-3')")},
			want: []problem{{"conditionRules[0].celExpressions[0].expression", []string{"must evaluate to a bool or a map"}}}},
		{name: "a bool or a map, never both", rules: []v1alpha1.ConditionRule{celRule("Complete", `object.ok ? true : {"reason": "No"}`)},
			want: []problem{{"conditionRules[0].celExpressions[0].expression", []string{"no matching overload"}}}},
		{name: "empty expression", rules: []v1alpha1.ConditionRule{celRule("Complete", " ")},
			want: []problem{{"conditionRules[0].celExpressions[0].expression", []string{"must not be empty"}}}},
		{name: "messageExpression must be a string", rules: []v1alpha1.ConditionRule{withMessage(celRule("Complete", "true"), "1 + 1")},
			want: []problem{{"conditionRules[0].messageExpression", []string{`expression "1 + 1": must evaluate to string`}}}},
		{name: "messageExpression of a WellKnownCompletions rule", rules: []v1alpha1.ConditionRule{withMessage(wellKnownRule(), "object.(")},
			want: []problem{{"conditionRules[0].messageExpression", []string{`expression "object.("`}}}},
		{name: "CEL rule without condition or expressions", rules: []v1alpha1.ConditionRule{celRule("")},
			want: []problem{{"conditionRules[0].condition", []string{"must be set when type is CEL"}},
				{"conditionRules[0].celExpressions", []string{"must have at least one expression"}}}},
		{name: "WellKnownCompletions with expressions", rules: []v1alpha1.ConditionRule{wkcWithExpr},
			want: []problem{{"conditionRules[0].celExpressions", []string{"must not be set when type is WellKnownCompletions"}}}},
		{name: "unknown type", rules: []v1alpha1.ConditionRule{{Condition: "Complete", Type: "Regex"}},
			want: []problem{{"conditionRules[0].type", []string{`must be CEL or WellKnownCompletions, not "Regex"`}}}},
		{name: "reserved condition", rules: []v1alpha1.ConditionRule{wellKnownRule(), celRule(v1alpha1.ConditionReady, "true")},
			want: []problem{{"conditionRules[1].condition", []string{"must not be Ready: Surveyor sets that condition itself"}}}},
		{name: "invalid condition type", rules: []v1alpha1.ConditionRule{celRule("not a type", "true")},
			want: []problem{{"conditionRules[0].condition", []string{`"not a type" is not a valid condition type`}}}},
		{name: "every problem, in field order", rules: []v1alpha1.ConditionRule{
			withMessage(celRule("Complete", "'a'", "true", "object.("), "2"), celRule("Initialized", "true"), celRule("", "1")},
			want: []problem{
				{"conditionRules[0].celExpressions[0].expression", nil},
				{"conditionRules[0].celExpressions[2].expression", nil},
				{"conditionRules[0].messageExpression", nil},
				{"conditionRules[2].condition", nil},
				{"conditionRules[2].celExpressions[0].expression", nil},
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := workitems.Validate(tc.rules)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			var invalid *health.InvalidRuleError
			if !errors.As(err, &invalid) {
				t.Fatalf("Validate = %v, want an *health.InvalidRuleError", err)
			}
			if len(invalid.Fields) != len(tc.want) {
				t.Fatalf("Validate found %d problems, want %d: %v", len(invalid.Fields), len(tc.want), err)
			}
			for i, w := range tc.want {
				f := invalid.Fields[i]
				if f.Path != w.path {
					t.Errorf("problem %d at %s, want %s: %v", i, f.Path, w.path, f)
				}
				for _, c := range w.contains {
					if !strings.Contains(f.Err.Error(), c) {
						t.Errorf("problem %d %q does not contain %q", i, f.Err, c)
					}
				}
				if !strings.HasPrefix(err.Error(), invalid.Fields[0].Path+": ") {
					t.Errorf("error %q does not start with the first path", err)
				}
			}
		})
	}
}

// TestValidateExpressionErrorsAreInvalidExpression shows that a bad expression is an
// ErrInvalidExpression, the sentinel the realizer can tell apart from structural problems.
func TestValidateExpressionErrorsAreInvalidExpression(t *testing.T) {
	for _, text := range []string{"object.(", "'done'"} {
		err := workitems.Validate([]v1alpha1.ConditionRule{celRule("Complete", text)})
		if !errors.Is(err, expr.ErrInvalidExpression) {
			t.Errorf("Validate(%q) = %v, want an ErrInvalidExpression", text, err)
		}
	}
}
