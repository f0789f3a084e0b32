package expr_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/surveyor-dev/surveyor/pkg/expr"
)

func TestCompileCEL(t *testing.T) {
	tests := []struct {
		name    string
		expr    string
		want    expr.ResultType
		wantErr string
	}{
		{"bool", `object.status.succeeded > 0`, expr.ResultBool, ""},
		{"dyn passes as bool", `object.status.ready`, expr.ResultBool, ""},
		{"string", `"a" + "b"`, expr.ResultString, ""},
		{"dyn passes as string", `object.status.phase`, expr.ResultString, ""},
		{"any takes a map", `{"status": true, "reason": "Done", "message": "m"}`, expr.ResultAny, ""},
		{"int is not bool", `1 + 2`, expr.ResultBool, `expression "1 + 2": must evaluate to bool, but has type int`},
		{"string is not bool", `"yes"`, expr.ResultBool, `expression "\"yes\"": must evaluate to bool, but has type string`},
		{"bool is not string", `true`, expr.ResultString, `expression "true": must evaluate to string, but has type bool`},
		{"syntax error", `object.status.`, expr.ResultBool, "expression \"object.status.\": ERROR: <input>:1:15: Syntax error: no viable alternative at input '.'\n | object.status.\n | ..............^"},
		{"unknown variable", `self.x`, expr.ResultBool, "expression \"self.x\": ERROR: <input>:1:1: undeclared reference to 'self' (in container '')\n | self.x\n | ^"},
		{"kubernetes libraries", `quantity("1Gi").isGreaterThan(quantity("1Mi")) && url("https://x/y").getHost() == "x" && isIP("10.0.0.1")`, expr.ResultBool, ""},
		{"extensions", `"a,b".split(",").size() == 2 && sets.contains([1, 2], [1]) && [3, 1].sort() == [1, 3] && optional.of(1).hasValue()`, expr.ResultBool, ""},
		{"indexes", `indexes("1,3-5") == [1, 3, 4, 5]`, expr.ResultBool, ""},
		{"indexes takes a string", `indexes(1)`, expr.ResultAny, "expression \"indexes(1)\": ERROR: <input>:1:8: found no matching overload for 'indexes' applied to '(int)'\n | indexes(1)\n | .......^"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := expr.CompileCEL(tt.expr, tt.want)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || err.Error() != tt.wantErr {
				t.Fatalf("error %v, want %q", err, tt.wantErr)
			}
			if !errors.Is(err, expr.ErrInvalidExpression) {
				t.Errorf("error %v is not ErrInvalidExpression", err)
			}
		})
	}
}

func TestCompileCELCachesPrograms(t *testing.T) {
	// The name differs on every run, so that -count=N compiles it anew each time.
	name := fmt.Sprintf("%s-%d", t.Name(), time.Now().UnixNano())
	text := fmt.Sprintf(`object.metadata.name == %q`, name)
	before := expr.CELCompileCount()
	p1, err := expr.CompileCEL(text, expr.ResultBool)
	if err != nil {
		t.Fatal(err)
	}
	p2, _ := expr.CompileCEL(text, expr.ResultAny)
	if p1 != p2 {
		t.Error("the same expression compiled into two programs")
	}
	bad := text + " &&"
	for range 3 {
		if _, err := expr.CompileCEL(bad, expr.ResultBool); err == nil {
			t.Fatal("invalid expression compiled")
		}
	}
	if got := expr.CELCompileCount() - before; got != 2 {
		t.Errorf("compiled %d times, want 2 (one valid, one invalid expression)", got)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			s := expr.NewScope(map[string]any{"metadata": map[string]any{"name": name}})
			if ok, err := p1.EvalBool(s); !ok || err != nil {
				t.Errorf("concurrent evaluation: %v, %v", ok, err)
			}
		})
	}
	wg.Wait()
}

func TestProgramEval(t *testing.T) {
	jb := job(t).Object
	tests := []struct {
		name    string
		expr    string
		want    any
		wantErr error
		errText string
	}{
		{"bool", `object.status.succeeded == object.spec.completions`, true, nil, ""},
		{"int", `object.status.succeeded`, int64(8), nil, ""},
		{"string", `object.status.completedIndexes`, "0-3,5,6-7,4", nil, ""},
		{"null", `object.metadata.?labels.orValue(null)`, nil, nil, ""},
		{"list", `indexes(object.status.completedIndexes)`, []any{int64(0), int64(1), int64(2), int64(3), int64(5), int64(6), int64(7), int64(4)}, nil, ""},
		{"map result for condition rules", `{"status": object.status.succeeded > 0, "reason": "Succeeded", "message": "ran " + string(object.status.succeeded)}`,
			map[string]any{"status": true, "reason": "Succeeded", "message": "ran 8"}, nil, ""},
		{"object map", `object.spec.template.spec.containers[0]`, map[string]any{"name": "test", "image": "busybox"}, nil, ""},
		{"filtered conditions", `object.status.conditions.filter(c, c.status == "True").map(c, c.type)`, []any{"SuccessCriteriaMet", "Complete"}, nil, ""},
		{"two-variable comprehension", `object.status.conditions.exists(i, c, i == 1 && c.type == "Complete")`, true, nil, ""},
		{"timestamp as string", `timestamp("2025-01-01T00:00:00Z")`, "2025-01-01T00:00:00Z", nil, ""},
		{"missing key", `object.status.failedIndexes`, nil, expr.ErrMissingData, `expression "object.status.failedIndexes": no such key: failedIndexes`},
		{"index out of range", `object.status.conditions[5].type`, nil, expr.ErrMissingData, `expression "object.status.conditions[5].type": index out of bounds: 5`},
		{"division by zero", `object.status.failed / object.status.failed`, nil, expr.ErrEvaluation, `expression "object.status.failed / object.status.failed": division by zero`},
		{"indexes rejects a bad set", `indexes("1,x")`, nil, expr.ErrEvaluation, `expression "indexes(\"1,x\")": indexes: invalid index set item "x": invalid syntax`},
		{"map with int keys", `{1: 2}`, nil, expr.ErrResultType, `expression "{1: 2}": map key 1 has type int, want string`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := expr.CompileCEL(tt.expr, expr.ResultAny)
			if err != nil {
				t.Fatal(err)
			}
			got, err := p.Eval(expr.NewScope(jb))
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) || err.Error() != tt.errText {
					t.Fatalf("error %v, want %q wrapping %v", err, tt.errText, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("result mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestProgramEvalTyped(t *testing.T) {
	s := expr.NewScope(job(t).Object)
	b, _ := expr.CompileCEL(`object.status.succeeded > 0`, expr.ResultBool)
	if ok, err := b.EvalBool(s); !ok || err != nil {
		t.Errorf("EvalBool: %v, %v", ok, err)
	}
	str, _ := expr.CompileCEL(`object.metadata.name`, expr.ResultString)
	if v, err := str.EvalString(s); v != "test-run" || err != nil {
		t.Errorf("EvalString: %q, %v", v, err)
	}
	notBool, _ := expr.CompileCEL(`object.status.succeeded`, expr.ResultBool)
	if _, err := notBool.EvalBool(s); !errors.Is(err, expr.ErrResultType) ||
		err.Error() != `expression "object.status.succeeded": must evaluate to bool, but evaluated to int` {
		t.Errorf("EvalBool of an int: %v", err)
	}
	notString, _ := expr.CompileCEL(`object.status.succeeded`, expr.ResultString)
	if _, err := notString.EvalString(s); !errors.Is(err, expr.ErrResultType) {
		t.Errorf("EvalString of an int: %v", err)
	}
	if _, err := b.EvalBool(nil); !errors.Is(err, expr.ErrEvaluation) {
		t.Errorf("EvalBool without a scope: %v", err)
	}
}

func TestScopeBudget(t *testing.T) {
	obj := deployment(t).Object
	cheap, _ := expr.CompileCEL(`object.status.conditions.exists(c, c.type == "Available")`, expr.ResultBool)
	heavy, _ := expr.CompileCEL(`lists.range(1500).all(i, lists.range(1500).all(j, i != j || i == j))`, expr.ResultBool)

	t.Run("expressions share the budget", func(t *testing.T) {
		s := expr.NewScopeWithBudget(obj, 1000)
		n := 0
		var err error
		for err == nil && n < 1000 {
			_, err = cheap.EvalBool(s)
			n++
		}
		if !errors.Is(err, expr.ErrBudgetExhausted) {
			t.Fatalf("error %v, want ErrBudgetExhausted", err)
		}
		if n < 2 || n > 500 {
			t.Errorf("budget of 1000 ran out after %d evaluations", n)
		}
		if _, err := cheap.EvalBool(s); !errors.Is(err, expr.ErrBudgetExhausted) {
			t.Errorf("after exhaustion: %v", err)
		}
	})
	t.Run("per-call limit", func(t *testing.T) {
		s := expr.NewScope(obj)
		_, err := heavy.EvalBool(s)
		if !errors.Is(err, expr.ErrCostLimitExceeded) {
			t.Fatalf("error %v, want ErrCostLimitExceeded", err)
		}
		if want := expr.CELObjectCostBudget - expr.CELCallCostLimit; s.Remaining() != want {
			t.Errorf("remaining %d, want %d", s.Remaining(), want)
		}
	})
	t.Run("budget below one evaluation's actual cost", func(t *testing.T) {
		s := expr.NewScopeWithBudget(obj, 3)
		if _, err := cheap.EvalBool(s); !errors.Is(err, expr.ErrBudgetExhausted) {
			t.Fatalf("error %v, want ErrBudgetExhausted", err)
		}
	})
}

func TestParseIndexes(t *testing.T) {
	tests := []struct {
		set     string
		want    []int64
		wantErr string
	}{
		{"", []int64{}, ""},
		{"  ", []int64{}, ""},
		{"0", []int64{0}, ""},
		{"1,3-5,7", []int64{1, 3, 4, 5, 7}, ""},
		{"0-2, 4 ,6-6", []int64{0, 1, 2, 4, 6}, ""},
		{"5,1", []int64{5, 1}, ""},
		{"1,", nil, `invalid index set item ""`},
		{",1", nil, `invalid index set item ""`},
		{"a", nil, `invalid index set item "a": invalid syntax`},
		{"-1", nil, `invalid index set item "-1"`},
		{"3-1", nil, `invalid index range "3-1": end is below start`},
		{"1-", nil, `invalid index set item "1-"`},
		{"1-2-3", nil, `invalid index set item "1-2-3": invalid syntax`},
		{"+1", nil, `invalid index set item "+1"`},
		{"99999999999999999999", nil, `invalid index set item "99999999999999999999": value out of range`},
		{"0-99999", nil, ""},
		{"0-100000", nil, "index set has more than 100000 indexes"},
	}
	for _, tt := range tests {
		t.Run(tt.set, func(t *testing.T) {
			got, err := expr.ParseIndexes(tt.set)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.want != nil && !cmp.Equal(tt.want, got) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestIndexesInCEL(t *testing.T) {
	tests := []struct {
		expr string
		want bool
	}{
		{`indexes("") == []`, true},
		{`indexes("1,3-5,7") == [1, 3, 4, 5, 7]`, true},
		{`size(indexes(object.status.completedIndexes)) == object.spec.completions`, true},
		{`indexes(object.status.completedIndexes).all(i, i < object.spec.completions)`, true},
		{`sets.equivalent(indexes(object.status.completedIndexes), lists.range(8))`, true},
		{`!has(object.status.failedIndexes) || indexes(object.status.failedIndexes).size() == 0`, true},
	}
	s := expr.NewScope(job(t).Object)
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			p, err := expr.CompileCEL(tt.expr, expr.ResultBool)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := p.EvalBool(s); err != nil || got != tt.want {
				t.Errorf("got %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

// bigList is an object with n items, for expressions whose running time grows with it.
func bigList(n int) map[string]any {
	items := make([]any, n)
	for i := range items {
		items[i] = map[string]any{"n": int64(i)}
	}
	return map[string]any{"spec": map[string]any{"items": items}}
}

// TestLongEvaluationEndsWithinTheLimits evaluates expressions that would run for minutes or
// hours: nested comprehensions over a big list. Each ends within the time limit (and a margin
// for a loaded machine) with ErrCostLimitExceeded, saying which limit stopped it.
func TestLongEvaluationEndsWithinTheLimits(t *testing.T) {
	for _, text := range []string{
		// 10^9 steps over the object.
		`object.spec.items.all(a, object.spec.items.all(b, object.spec.items.all(c, a.n + b.n + c.n >= 0)))`,
		// 10^6 steps that each cost little, then a sort of a million.
		`object.spec.items.map(a, object.spec.items.map(b, a.n * b.n)).flatten().sort().size() > 0`,
		// A long comprehension: cel-go's tracker is quadratic in its length.
		`lists.range(100000).all(i, true)`,
	} {
		t.Run(text, func(t *testing.T) {
			p, err := expr.CompileCEL(text, expr.ResultBool)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, err = p.EvalBool(expr.NewScope(bigList(1000)))
			took := time.Since(start)
			if !errors.Is(err, expr.ErrCostLimitExceeded) {
				t.Fatalf("error %v, want ErrCostLimitExceeded", err)
			}
			if !strings.Contains(err.Error(), "evaluation stopped after 100ms") && !strings.Contains(err.Error(), "cost limit of 1000000 exceeded") {
				t.Errorf("error %q says neither limit", err)
			}
			// Minutes or hours are the failure; a loaded machine took 240 ms.
			if limit := expr.CELCallTimeLimit + 10*time.Second; took > limit {
				t.Errorf("took %s, want at most %s", took, limit)
			}
			t.Logf("stopped after %s: %v", took.Round(time.Millisecond), err)
		})
	}
}
