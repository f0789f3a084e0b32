package expr_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/surveyor-dev/surveyor/pkg/expr"
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
// The per-call limits must stop any expression long before this: the time limit
// (expr.CELCallTimeLimit) stops the costliest seeds after a tenth of a second.
const celEvalLimit = 10 * time.Second

// FuzzCELEval compiles arbitrary expressions and evaluates them over a fixed object
// through every entry point the rules use. Nothing may panic or hang; every error must
// carry one of the package's sentinel kinds and quote the expression; an expression
// whose static type is bool never fails EvalBool with ErrResultType; and the scope's
// budget only ever shrinks.
//
// Seeds live in testdata/fuzz/FuzzCELEval; run with
//
//	go test -run XXX -fuzz '^FuzzCELEval$' -fuzztime 10s ./pkg/expr
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
		// Calls that would allocate in proportion to an argument: refused before they run.
		`lists.range(50000000).size() > 0`,
		`'abc'.replace('', 'xyz').replace('', 'xyz').size() > 0`,
		`[object.metadata.name].map(s, s + s + s + s).map(s, s + s + s + s)[0].size()`,
		`lists.range(100).map(i, object.spec.items).flatten().size()`,
		`'%.99999999f'.format([object.spec.ratio])`,
		`lists.range(10).map(i, 'ab').join(object.metadata.name)`,
		`quantity('1e2000000000').isGreaterThan(quantity('1'))`,
		`object.metadata.name.matches('(?:abcdefghij){1000}')`,
		`sets.contains(lists.range(2000), lists.range(2000))`,
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
			for _, kind := range []error{expr.ErrInvalidExpression, expr.ErrMissingData, expr.ErrCostLimitExceeded,
				expr.ErrBudgetExhausted, expr.ErrResultType, expr.ErrEvaluation} {
				known = known || errors.Is(err, kind)
			}
			if !known {
				t.Fatalf("%s: error %q has none of the package's kinds", what, err)
			}
			if !strings.HasPrefix(err.Error(), quoted) {
				t.Fatalf("%s: error %q does not quote the expression", what, err)
			}
		}

		anyProg, err := expr.CompileCEL(expression, expr.ResultAny)
		checkErr("CompileCEL(any)", err)
		if err != nil {
			return
		}
		boolProg, boolErr := expr.CompileCEL(expression, expr.ResultBool)
		checkErr("CompileCEL(bool)", boolErr)
		_, strErr := expr.CompileCEL(expression, expr.ResultString)
		checkErr("CompileCEL(string)", strErr)
		staticBool := boolErr == nil && strErr != nil

		const budget = 3 * expr.CELCallCostLimit
		scope := expr.NewScopeWithBudget(fuzzCELObject(), budget)
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
		if errors.Is(err, expr.ErrCostLimitExceeded) {
			return // stopped at the limit, as it must be; another run would cost as much
		}
		if boolProg != nil {
			err := within("EvalBool", func() error { _, err := boolProg.EvalBool(scope); return err })
			if staticBool && errors.Is(err, expr.ErrResultType) {
				t.Fatalf("expression of static type bool failed EvalBool with a result type error: %v", err)
			}
		}
		_ = within("EvalString", func() error { _, err := anyProg.EvalString(scope); return err })
	})
}
