package health_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/health"
)

// fuzzCELObject is the fixed object FuzzCELEval evaluates expressions over: a Job-like
// object with a list of 100 items, so that three nested comprehensions overrun the cost
// limit. (A longer list makes comprehensions that stop at the limit slow enough to
// starve the fuzzer: see testdata/fuzz/FuzzCELEval/bug-tracked-comprehension-quadratic-time.)
func fuzzCELObject() map[string]any {
	items := make([]any, 100)
	for i := range items {
		items[i] = map[string]any{"name": "item-" + strconv.Itoa(i), "n": int64(i)}
	}
	return map[string]any{
		"apiVersion": "batch/v1",
		"kind":       "Job",
		"metadata":   map[string]any{"name": "once", "generation": int64(2), "labels": map[string]any{"app": "web", "ü": "ünïcode"}},
		"spec":       map[string]any{"completions": int64(3), "items": items, "ratio": 0.5, "nothing": nil},
		"status": map[string]any{
			"succeeded":          int64(3),
			"observedGeneration": int64(2),
			"completedIndexes":   "0-2",
			"conditions": []any{
				map[string]any{"type": "Complete", "status": "True", "reason": "CompletionsReached", "message": "done"},
			},
		},
	}
}

// celEvalLimit is how long one evaluation may take before the fuzzer calls it a hang.
// The cost limit must stop any expression long before this: the costliest seeds stop at
// the limit within about a second.
const celEvalLimit = 10 * time.Second

// FuzzCELEval compiles arbitrary expressions and evaluates them over a fixed object
// through every entry point the rules use. Nothing may panic or hang; every error must
// carry one of the package's sentinel kinds and quote the expression; an expression
// whose static type is bool never fails EvalBool with ErrResultType; and the scope's
// budget only ever shrinks.
//
// Seeds live in testdata/fuzz/FuzzCELEval; run with
//
//	go test -run XXX -fuzz '^FuzzCELEval$' -fuzztime 10s ./pkg/health
func FuzzCELEval(f *testing.F) {
	for _, seed := range []string{
		`object.status.succeeded >= object.spec.completions`,
		`object.status.conditions.exists(c, c.type == 'Complete' && c.status == 'True')`,
		`int(object.metadata.name) > 0`,
		`1 / (object.status.succeeded - 3) == 0`,
		`object.status.missing == 'x'`,
		`object.spec.items[1000].n`,
		`object.status.completedIndexes.indexes().size() == 3`,
		`{'status': true, 'reason': 'Done', 'message': 'ok'}`,
		`'a' + object.metadata.labels['ü']`,
		`object.?spec.?nothing.orValue('none')`,
		`object.spec.ratio * 2.0`,
		`[1, 2, 3].sum()`,
		`object.`,
		`self.x`,
		``,
		`"\u00e9".matches('^.$')`,
		`quantity('1Gi').isGreaterThan(quantity('1Mi'))`,
		`dyn(object.spec.items).filter(x, x.n % 2 == 0).size()`,
		`object.status.conditions[0].message.split('').size()`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, expression string) {
		quoted := "expression " + strconv.Quote(expression)
		checkErr := func(what string, err error) {
			t.Helper()
			if err == nil {
				return
			}
			known := false
			for _, kind := range []error{health.ErrInvalidExpression, health.ErrMissingData, health.ErrCostLimitExceeded,
				health.ErrBudgetExhausted, health.ErrResultType, health.ErrEvaluation} {
				known = known || errors.Is(err, kind)
			}
			if !known {
				t.Fatalf("%s: error %q has none of the package's kinds", what, err)
			}
			if !strings.HasPrefix(err.Error(), quoted) {
				t.Fatalf("%s: error %q does not quote the expression", what, err)
			}
		}

		anyProg, err := health.CompileCEL(expression, health.ResultAny)
		checkErr("CompileCEL(any)", err)
		if err != nil {
			return
		}
		boolProg, boolErr := health.CompileCEL(expression, health.ResultBool)
		checkErr("CompileCEL(bool)", boolErr)
		_, strErr := health.CompileCEL(expression, health.ResultString)
		checkErr("CompileCEL(string)", strErr)
		staticBool := boolErr == nil && strErr != nil

		const budget = 3 * health.CELCallCostLimit
		scope := health.NewScopeWithBudget(fuzzCELObject(), budget)
		within := func(what string, eval func() error) error {
			t.Helper()
			before := scope.Remaining()
			done := make(chan error, 1)
			go func() { done <- eval() }()
			select {
			case err := <-done:
				checkErr(what, err)
				if scope.Remaining() > before {
					t.Fatalf("%s raised the remaining budget from %d to %d", what, before, scope.Remaining())
				}
				return err
			case <-time.After(celEvalLimit):
				t.Fatalf("%s of %q did not finish within %s: the cost limit did not stop it", what, expression, celEvalLimit)
				return nil
			}
		}
		err = within("Eval", func() error { _, err := anyProg.Eval(scope); return err })
		if errors.Is(err, health.ErrCostLimitExceeded) {
			return // stopped at the limit, as it must be; another run would cost as much
		}
		if boolProg != nil {
			err := within("EvalBool", func() error { _, err := boolProg.EvalBool(scope); return err })
			if staticBool && errors.Is(err, health.ErrResultType) {
				t.Fatalf("expression of static type bool failed EvalBool with a result type error: %v", err)
			}
		}
		within("EvalString", func() error { _, err := anyProg.EvalString(scope); return err })
	})
}

// FuzzHealthMatchFields judges arbitrary objects under a multiMatch rule whose healthy
// side is one arbitrary matchFields requirement. Evaluate must never panic; a rule that
// Validate accepts must never be reported as InvalidHealthRule; the condition must be a
// valid one (status, reason, message within the API's limit); and, for a key that
// parses, Exists and DoesNotExist must be complementary.
//
// Seeds live in testdata/fuzz/FuzzHealthMatchFields; run with
//
//	go test -run XXX -fuzz '^FuzzHealthMatchFields$' -fuzztime 10s ./pkg/health
func FuzzHealthMatchFields(f *testing.F) {
	cm := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","generation":1},"data":{"ready":"yes","n":"3"},` +
		`"status":{"phase":"Running","replicas":3,"ok":true,"conditions":[{"type":"Ready","status":"True","message":"fine"}]}}`
	f.Add("data.ready", "In", "yes", "data.n", cm)
	f.Add("status.replicas", "In", "3", "status.conditions[0].message", cm)
	f.Add("status.ok", "NotIn", "false", "", cm)
	f.Add("status.conditions[?(@.type=='Ready')].status", "In", "True", "status.conditions[?(@.type=='Ready')].message", cm)
	f.Add("data.*", "Exists", "", "nowhere.at.all", cm)
	f.Add("status.[", "Exists", "", "", cm)
	f.Add("data.ready", "DoesNotExist", "", "status.[", cm)
	f.Add("{range .status.conditions[*]}{.type}{end}", "In", "Ready", "", cm)
	f.Add("$", "Equals", "", "", `{"metadata":{"generation":2},"status":{"observedGeneration":1}}`)
	f.Add("a", "In", "", "", `[1,2]`)

	f.Fuzz(func(t *testing.T, key, operator, value, messagePath, objectJSON string) {
		var content map[string]any
		if err := utiljson.Unmarshal([]byte(objectJSON), &content); err != nil || content == nil {
			content = map[string]any{"kind": "ConfigMap", "data": map[string]any{"ready": "yes"}}
		}
		var values []string
		if value != "" {
			values = []string{value}
		}
		rule := func(op v1alpha1.FieldSelectorOperator) *v1alpha1.HealthRule {
			return &v1alpha1.HealthRule{MultiMatch: &v1alpha1.MultiMatchRule{
				Healthy: v1alpha1.MatchRule{MatchFields: []v1alpha1.HealthMatchFieldSelectorRequirement{{
					FieldSelectorRequirement: v1alpha1.FieldSelectorRequirement{Key: key, Operator: op, Values: values},
					MessagePath:              messagePath,
				}}},
				Unhealthy: v1alpha1.MatchRule{MatchConditions: []v1alpha1.ConditionRequirement{{Type: "NeverSet.example.com", Status: "True"}}},
			}}
		}
		judge := func(op v1alpha1.FieldSelectorOperator) (metav1.Condition, bool) {
			r := rule(op)
			valid := health.Validate(r) == nil
			obj := &unstructured.Unstructured{Object: content}
			c := health.Evaluate(health.Input{Rule: r, Object: obj, HasOutputs: true, OutputsRead: true})
			switch c.Status {
			case metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionUnknown:
			default:
				t.Fatalf("status %q", c.Status)
			}
			if c.Type != v1alpha1.ConditionHealthy || c.Reason == "" {
				t.Fatalf("condition %+v has no type or reason", c)
			}
			if len(c.Message) > 32768 {
				t.Fatalf("message of %d bytes is over the API's limit", len(c.Message))
			}
			if valid && c.Reason == v1alpha1.ReasonInvalidHealthRule {
				t.Fatalf("Validate accepted the rule but Evaluate says %s: %s", c.Reason, c.Message)
			}
			return c, valid
		}
		judge(v1alpha1.FieldSelectorOperator(operator))

		values = nil
		exists, ok1 := judge(v1alpha1.FieldSelectorOpExists)
		missing, ok2 := judge(v1alpha1.FieldSelectorOpDoesNotExist)
		if !ok1 || !ok2 || exists.Reason == v1alpha1.ReasonLatestGenerationNotObserved {
			return
		}
		if (exists.Status == metav1.ConditionTrue) == (missing.Status == metav1.ConditionTrue) {
			t.Fatalf("key %q: Exists gives %s %s and DoesNotExist gives %s %s", key, exists.Status, exists.Message, missing.Status, missing.Message)
		}
	})
}
