package workitems_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/expr"
	"github.com/surveyor-dev/surveyor/pkg/workitems"
)

// indexedJobYAML is an Indexed Job part way through: indexes 0, 2 and 3 completed, 1 failed.
const indexedJobYAML = `
apiVersion: batch/v1
kind: Job
metadata: {name: shards, namespace: dev}
spec: {completions: 5, completionMode: Indexed}
status:
  completedIndexes: "0,2-3"
  failedIndexes: "1"
  succeeded: 3
  count: 3
  expectedCount: 4
  phase: Running
  conditions:
  - {type: Initialized, status: "True"}
`

func TestEvaluateCEL(t *testing.T) {
	const (
		complete = v1alpha1.ConditionComplete
		ready    = "Initialized"
	)
	obj := object(t, indexedJobYAML)
	// countMap is seed 000's map example (no status key).
	const countMap = `object.status.count >= object.status.expectedCount
  ? {"message": "Count matches expected", "reason": "CountReached"}
  : {"message": "Count is only " + string(object.status.count) + " expected " + string(object.status.expectedCount), "reason": "CountNotReached"}`
	withMessage := func(r v1alpha1.ConditionRule, expr string) v1alpha1.ConditionRule {
		r.MessageExpression = expr
		return r
	}
	tests := []struct {
		name  string
		rules []v1alpha1.ConditionRule
		obj   *unstructured.Unstructured
		want  []metav1.Condition
		// contains lists parts of messages that quote package expr's errors, by condition index.
		contains map[int][]string
	}{
		{name: "true", rules: []v1alpha1.ConditionRule{celRule(complete, "true")},
			want: []metav1.Condition{passed(complete, "Resource is Complete")}},
		{name: "false", rules: []v1alpha1.ConditionRule{celRule(complete, "object.status.succeeded >= 5")},
			want: []metav1.Condition{failed(complete, "Resource is not Complete")}},
		{name: "expressions are ANDed", rules: []v1alpha1.ConditionRule{celRule(complete, "true", "object.status.succeeded == 3", "false")},
			want: []metav1.Condition{failed(complete, "Resource is not Complete")}},
		{name: "seed 000 job rule", rules: []v1alpha1.ConditionRule{celRule(ready,
			"object.status.conditions.filter(c, c.type == 'Initialized').exists(c, c.status == 'True')")},
			want: []metav1.Condition{passed(ready, "Resource is Initialized")}},
		{name: "missing key is an evaluation error", rules: []v1alpha1.ConditionRule{celRule(ready, "object.status.initialzed")},
			want:     []metav1.Condition{failed(ready, "")},
			contains: map[int][]string{0: {`failed to evaluate: expression "object.status.initialzed": `, "no such key: initialzed"}}},
		{name: "non-bool result is an error", rules: []v1alpha1.ConditionRule{celRule(complete, "object.status.phase")},
			want: []metav1.Condition{failed(complete,
				`failed to evaluate: expression "object.status.phase": must evaluate to a bool or a map {status?, reason, message}, but evaluated to string`)}},
		{name: "int result is an error", rules: []v1alpha1.ConditionRule{celRule(complete, "object.status.succeeded")},
			want: []metav1.Condition{failed(complete,
				`failed to evaluate: expression "object.status.succeeded": must evaluate to a bool or a map {status?, reason, message}, but evaluated to int`)}},
		{name: "expression that does not compile", rules: []v1alpha1.ConditionRule{celRule(complete, "object.status.(")},
			want:     []metav1.Condition{failed(complete, "")},
			contains: map[int][]string{0: {`failed to evaluate: expression "object.status.("`}}},
		{name: "the first false expression decides; later ones are not evaluated",
			rules: []v1alpha1.ConditionRule{celRule(complete, "false", "object.status.nope")},
			want:  []metav1.Condition{failed(complete, "Resource is not Complete")}},
		{name: "an error after a true expression decides",
			rules:    []v1alpha1.ConditionRule{celRule(complete, "true", "object.status.nope")},
			want:     []metav1.Condition{failed(complete, "")},
			contains: map[int][]string{0: {`failed to evaluate: expression "object.status.nope"`, "no such key"}}},
		{name: "map with status true sets reason and message",
			rules: []v1alpha1.ConditionRule{celRule(complete, `{"status": true, "reason": "ShardsDone", "message": "3 shards done"}`)},
			want:  []metav1.Condition{cond(complete, metav1.ConditionTrue, "ShardsDone", "3 shards done")}},
		{name: "map with status string False",
			rules: []v1alpha1.ConditionRule{celRule(complete, `{"status": "False", "reason": "Waiting", "message": "not yet"}`)},
			want:  []metav1.Condition{cond(complete, metav1.ConditionFalse, "Waiting", "not yet")}},
		{name: "map with status Unknown",
			rules: []v1alpha1.ConditionRule{celRule(complete, `{"status": "Unknown", "reason": "NoData", "message": "no data"}`)},
			want:  []metav1.Condition{cond(complete, metav1.ConditionUnknown, "NoData", "no data")}},
		{name: "seed 000 map without status is False (count not reached)",
			rules: []v1alpha1.ConditionRule{celRule("ExpectedCount", countMap)},
			want:  []metav1.Condition{cond("ExpectedCount", metav1.ConditionFalse, "CountNotReached", "Count is only 3 expected 4")}},
		{name: "map without status is False even when it means success",
			rules: []v1alpha1.ConditionRule{celRule("ExpectedCount", strings.ReplaceAll(countMap, ">=", "<"))},
			want:  []metav1.Condition{cond("ExpectedCount", metav1.ConditionFalse, "CountReached", "Count matches expected")}},
		{name: "map without reason and message takes the defaults",
			rules: []v1alpha1.ConditionRule{celRule(complete, `{"status": true}`), celRule(ready, `{"status": false, "reason": ""}`)},
			want:  []metav1.Condition{passed(complete, "Resource is Complete"), failed(ready, "Resource is not Initialized")}},
		{name: "map Unknown without reason",
			rules: []v1alpha1.ConditionRule{celRule(complete, `{"status": "Unknown"}`)},
			want: []metav1.Condition{cond(complete, metav1.ConditionUnknown, v1alpha1.ReasonConditionRulesFailed,
				"Resource is not known to be Complete")}},
		{name: "map with an unknown key is an error",
			rules: []v1alpha1.ConditionRule{celRule(complete, `{"status": true, "mesage": "typo"}`)},
			want: []metav1.Condition{failed(complete,
				`failed to evaluate: expression "{\"status\": true, \"mesage\": \"typo\"}": map result: unknown key "mesage": only status, reason and message are allowed`)}},
		{name: "map with an invalid reason is an error",
			rules:    []v1alpha1.ConditionRule{celRule(complete, `{"status": true, "reason": "not a reason"}`)},
			want:     []metav1.Condition{failed(complete, "")},
			contains: map[int][]string{0: {`failed to evaluate: expression `, `map result: reason "not a reason" is not a valid condition reason`}}},
		{name: "map with a bad status is an error",
			rules: []v1alpha1.ConditionRule{celRule(complete, `{"status": "yes"}`)},
			want: []metav1.Condition{failed(complete,
				`failed to evaluate: expression "{\"status\": \"yes\"}": map result: status "yes" must be true, false, "True", "False" or "Unknown"`)}},
		{name: "map with a non-string message is an error",
			rules: []v1alpha1.ConditionRule{celRule(complete, `{"status": true, "message": 3}`)},
			want: []metav1.Condition{failed(complete,
				`failed to evaluate: expression "{\"status\": true, \"message\": 3}": map result: message must be a string, not int`)}},
		{name: "all true: the first map gives reason and message",
			rules: []v1alpha1.ConditionRule{celRule(complete, "true", `{"status": true, "reason": "First"}`, `{"status": true, "reason": "Second"}`)},
			want:  []metav1.Condition{cond(complete, metav1.ConditionTrue, "First", "Resource is Complete")}},
		{name: "a false bool after a true map decides",
			rules: []v1alpha1.ConditionRule{celRule(complete, `{"status": true, "reason": "First"}`, "false")},
			want:  []metav1.Condition{failed(complete, "Resource is not Complete")}},
		{name: "Unknown then false is False",
			rules: []v1alpha1.ConditionRule{celRule(complete, `{"status": "Unknown", "reason": "NoData"}`, `{"status": false, "reason": "Stopped"}`)},
			want:  []metav1.Condition{cond(complete, metav1.ConditionFalse, "Stopped", "Resource is not Complete")}},
		{name: "Unknown then true is Unknown",
			rules: []v1alpha1.ConditionRule{celRule(complete, `{"status": "Unknown", "reason": "NoData"}`, "true")},
			want:  []metav1.Condition{cond(complete, metav1.ConditionUnknown, "NoData", "Resource is not known to be Complete")}},
		{name: "indexes(): enough completed indexes",
			rules: []v1alpha1.ConditionRule{celRule(complete, "indexes(object.status.completedIndexes).size() >= 2")},
			want:  []metav1.Condition{passed(complete, "Resource is Complete")}},
		{name: "indexes(): membership",
			rules: []v1alpha1.ConditionRule{celRule(complete, "0 in indexes(object.status.completedIndexes)", "!(1 in indexes(object.status.completedIndexes))"),
				celRule("ShardFailed", "1 in indexes(object.status.failedIndexes)")},
			want: []metav1.Condition{passed(complete, "Resource is Complete"), passed("ShardFailed", "Resource is ShardFailed")}},
		{name: "indexes(): not all indexes done",
			rules: []v1alpha1.ConditionRule{celRule(complete, "indexes(object.status.completedIndexes).size() == object.spec.completions")},
			want:  []metav1.Condition{failed(complete, "Resource is not Complete")}},
		{name: "indexes(): malformed set is an error",
			rules:    []v1alpha1.ConditionRule{celRule(complete, "4 in indexes('1-')")},
			want:     []metav1.Condition{failed(complete, "")},
			contains: map[int][]string{0: {`failed to evaluate: expression "4 in indexes('1-')"`, `"1-"`}}},
		{name: "messageExpression replaces the message when True",
			rules: []v1alpha1.ConditionRule{withMessage(celRule(complete, "true"), "'done: ' + object.status.completedIndexes")},
			want:  []metav1.Condition{passed(complete, "done: 0,2-3")}},
		{name: "messageExpression replaces the message when False",
			rules: []v1alpha1.ConditionRule{withMessage(celRule(complete, "false"),
				"string(indexes(object.status.completedIndexes).size()) + ' of ' + string(object.spec.completions) + ' done'")},
			want: []metav1.Condition{failed(complete, "3 of 5 done")}},
		{name: "messageExpression replaces a map's message, not its reason",
			rules: []v1alpha1.ConditionRule{withMessage(celRule(complete, `{"status": true, "reason": "Done", "message": "map"}`), "'expr'")},
			want:  []metav1.Condition{cond(complete, metav1.ConditionTrue, "Done", "expr")}},
		{name: "messageExpression does not hide an evaluation error",
			rules:    []v1alpha1.ConditionRule{withMessage(celRule(complete, "object.status.nope"), "'expr'")},
			want:     []metav1.Condition{failed(complete, "")},
			contains: map[int][]string{0: {"failed to evaluate: ", "no such key: nope"}}},
		{name: "a failing messageExpression keeps the status",
			rules:    []v1alpha1.ConditionRule{withMessage(celRule(complete, "true"), "object.status.nope")},
			want:     []metav1.Condition{passed(complete, "")},
			contains: map[int][]string{0: {`failed to evaluate messageExpression: expression "object.status.nope"`}}},
		{name: "a non-string messageExpression",
			rules:    []v1alpha1.ConditionRule{withMessage(celRule(complete, "true"), "object.status.succeeded")},
			want:     []metav1.Condition{passed(complete, "")},
			contains: map[int][]string{0: {`failed to evaluate messageExpression: expression "object.status.succeeded"`}}},
		{name: "no rules", rules: nil, want: nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := obj
			if tc.obj != nil {
				o = tc.obj
			}
			assertConditions(t, tc.want, workitems.Evaluate(tc.rules, o, nil), tc.contains)
		})
	}
}

func TestEvaluateRules(t *testing.T) {
	obj := object(t, indexedJobYAML)
	const complete = v1alpha1.ConditionComplete
	unknownType := v1alpha1.ConditionRule{Condition: "Odd", Type: "Regex"}
	tests := []struct {
		name  string
		rules []v1alpha1.ConditionRule
		obj   *unstructured.Unstructured
		want  []metav1.Condition
	}{
		{name: "one condition per type in first-seen order",
			rules: []v1alpha1.ConditionRule{celRule(complete, "true"), celRule("Initialized", "false"), celRule("Sharded", "true"), celRule(complete, "true")},
			obj:   obj,
			want: []metav1.Condition{passed(complete, "Resource is Complete"), failed("Initialized", "Resource is not Initialized"),
				passed("Sharded", "Resource is Sharded")}},
		{name: "rules of one type are ANDed: a later False decides",
			rules: []v1alpha1.ConditionRule{celRule(complete, `{"status": true, "reason": "A"}`), celRule(complete, `{"status": false, "reason": "B"}`)},
			obj:   obj,
			want:  []metav1.Condition{cond(complete, metav1.ConditionFalse, "B", "Resource is not Complete")}},
		{name: "rules of one type are ANDed: False beats an earlier Unknown",
			rules: []v1alpha1.ConditionRule{celRule(complete, `{"status": "Unknown", "reason": "A"}`), celRule(complete, `{"status": false, "reason": "B"}`)},
			obj:   obj,
			want:  []metav1.Condition{cond(complete, metav1.ConditionFalse, "B", "Resource is not Complete")}},
		{name: "rules of one type are ANDed: Unknown beats True",
			rules: []v1alpha1.ConditionRule{celRule(complete, "true"), celRule(complete, `{"status": "Unknown", "reason": "NoData"}`)},
			obj:   obj,
			want:  []metav1.Condition{cond(complete, metav1.ConditionUnknown, "NoData", "Resource is not known to be Complete")}},
		{name: "rules of one type are ANDed: all True takes the first",
			rules: []v1alpha1.ConditionRule{celRule(complete, `{"status": true, "reason": "First"}`), celRule(complete, `{"status": true, "reason": "Second"}`)},
			obj:   obj,
			want:  []metav1.Condition{cond(complete, metav1.ConditionTrue, "First", "Resource is Complete")}},
		{name: "a CEL rule and WellKnownCompletions for Complete",
			rules: []v1alpha1.ConditionRule{celRule(complete, "true"), wellKnownRule()},
			obj:   obj,
			want:  []metav1.Condition{failed(complete, "Job is not Complete")}},
		{name: "no object: Unknown for every type",
			rules: []v1alpha1.ConditionRule{celRule("Initialized", "true"), wellKnownRule(), celRule(complete, "true")},
			obj:   nil,
			want: []metav1.Condition{
				cond("Initialized", metav1.ConditionUnknown, v1alpha1.ReasonNoStampedObject, workitems.MessageNoObject),
				cond(complete, metav1.ConditionUnknown, v1alpha1.ReasonNoStampedObject, workitems.MessageNoObject)}},
		{name: "empty and reserved condition types are skipped",
			rules: []v1alpha1.ConditionRule{celRule("", "true"), celRule(v1alpha1.ConditionReady, "true"), celRule(v1alpha1.ConditionHealthy, "false")},
			obj:   obj,
			want:  []metav1.Condition{}},
		{name: "unknown rule type", rules: []v1alpha1.ConditionRule{unknownType}, obj: obj,
			want: []metav1.Condition{failed("Odd", `unknown condition rule type "Regex"`)}},
		{name: "CEL rule without expressions", rules: []v1alpha1.ConditionRule{celRule(complete)}, obj: obj,
			want: []metav1.Condition{failed(complete, "failed to evaluate: the rule has no celExpressions")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assertConditions(t, tc.want, workitems.Evaluate(tc.rules, tc.obj, nil), nil)
		})
	}
}

// TestEvaluateBudget shows that an expensive expression cannot hang a reconcile: the object's
// budget runs out and the rule is False with an error that says so.
func TestEvaluateBudget(t *testing.T) {
	// 30 items make 900 comparisons: well over the budget of 100, and quick enough that the
	// time limit (CELCallTimeLimit) does not stop it first on a loaded machine.
	items := make([]any, 30)
	for i := range items {
		items[i] = int64(i)
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Batch", "metadata": map[string]any{"name": "b"},
		"spec": map[string]any{"items": items},
	}}
	const expensive = "object.spec.items.all(x, object.spec.items.exists(y, y == x))"
	rules := []v1alpha1.ConditionRule{celRule(v1alpha1.ConditionComplete, expensive), celRule("Cheap", "true")}

	scope := expr.NewScopeWithBudget(obj.Object, 100)
	got := workitems.Evaluate(rules, obj, scope)
	want := []metav1.Condition{failed(v1alpha1.ConditionComplete, ""), failed("Cheap", "")}
	// Once the budget is spent, even a cheap expression for the same object fails.
	assertConditions(t, want, got, map[int][]string{
		0: {fmt.Sprintf("failed to evaluate: expression %q: ", expensive), "budget"},
		1: {`failed to evaluate: expression "true": `, "budget"},
	})
	if scope.Remaining() != 0 {
		t.Errorf("remaining budget = %d, want 0", scope.Remaining())
	}

	// With the default budget the same rules evaluate.
	assertConditions(t, []metav1.Condition{passed(v1alpha1.ConditionComplete, "Resource is Complete"), passed("Cheap", "Resource is Cheap")},
		workitems.Evaluate(rules, obj, nil), nil)
}

// TestEvaluateLimits shows the per-call limits stopping a condition rule: the rule is False
// ConditionRulesFailed with an error that says which limit, within the time limit, never a hang.
func TestEvaluateLimits(t *testing.T) {
	obj := object(t, indexedJobYAML)
	for _, tt := range []struct{ expression, detail string }{
		{`lists.range(1000).sort().size() > 0`, "cost limit of 1000000 exceeded by one evaluation"},
		// Cheap by cost (400,004), but cel-go's tracker is quadratic in a comprehension's length.
		{`lists.range(100000).all(i, true)`, "evaluation stopped after 100ms"},
	} {
		start := time.Now()
		got := workitems.Evaluate([]v1alpha1.ConditionRule{celRule(v1alpha1.ConditionComplete, tt.expression)}, obj, nil)
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("%s took %s", tt.expression, took)
		}
		want := failed(v1alpha1.ConditionComplete, fmt.Sprintf("failed to evaluate: expression %q: %s", tt.expression, tt.detail))
		assertConditions(t, []metav1.Condition{want}, got, nil)
	}
}

// TestEvaluateSharesScope shows that condition rules charge the Scope the caller passes, the one
// the object's health rule also uses.
func TestEvaluateSharesScope(t *testing.T) {
	obj := object(t, indexedJobYAML)
	scope := expr.NewScope(obj.Object)
	before := scope.Remaining()
	workitems.Evaluate([]v1alpha1.ConditionRule{celRule("Initialized", "object.status.conditions.exists(c, c.type == 'Initialized')")}, obj, scope)
	if scope.Remaining() >= before {
		t.Errorf("remaining budget %d, want less than %d", scope.Remaining(), before)
	}
}

func TestEvaluateTruncatesMessages(t *testing.T) {
	obj := pod(map[string]any{"phase": "Failed", "message": strings.Repeat("é", 20000)})
	got := workitems.Evaluate([]v1alpha1.ConditionRule{wellKnownRule()}, obj, nil)
	if n := len(got[0].Message); n > 32768 {
		t.Errorf("message has %d bytes, want at most 32768", n)
	}
	if !strings.HasSuffix(got[0].Message, "...") || !strings.HasPrefix(got[0].Message, "Pod failed: é") {
		t.Errorf("message not truncated with an ellipsis: %q...", got[0].Message[:40])
	}
}
