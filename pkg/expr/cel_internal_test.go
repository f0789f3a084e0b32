package expr

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/ext"
	"github.com/google/go-cmp/cmp"
)

// TestCELMatchesReference evaluates expressions with Surveyor's program (JSON adapter, cost
// tracking, interrupt check) and with a plain cel-go environment, and requires the same results.
func TestCELMatchesReference(t *testing.T) {
	exprs := []string{
		`object.kind`, `object.metadata`, `object.metadata.labels`, `object.spec.tags`, `object.spec.nothing`,
		`object.spec.nothing == null`, `object.spec.replicas + 1`, `object.spec.ratio * 2.0`, `object.spec.enabled`,
		`object.spec.tags.size()`, `size(object.metadata.labels)`, `"b" in object.spec.tags`, `"app" in object.metadata.labels`,
		`"nope" in object.metadata.labels`, `object.spec.tags[1]`, `object.spec.tags[5]`, `object.spec.tags + ["d"]`,
		`object.spec.tags == ["a", "b", "c"]`, `object.metadata.labels == {"app": "web", "tier": "front"}`,
		`object.metadata.labels == {"app": "web"}`, `object.spec.emptyMap == {}`, `object.spec.empty == []`,
		`object.spec.containers.map(c, c.name)`, `object.spec.containers.filter(c, has(c.ports)).map(c, c.ports[0].port)`,
		`object.spec.containers.exists(c, c.image.startsWith("img:2"))`, `object.spec.containers.all(c, c.name != "")`,
		`object.spec.containers.exists_one(c, c.name == "app")`, `object.metadata.labels.all(k, k.size() > 2)`,
		`object.metadata.labels.exists(k, v, v == "web")`, `object.spec.tags.all(i, v, i < 3 && v != "")`,
		`object.metadata.labels.transformMap(k, v, v + "!")`, `object.spec.tags.transformList(i, v, i)`,
		`has(object.status.phase)`, `has(object.status.missing)`, `object.?status.?missing.orValue("none")`,
		`object.?spec.?replicas.orValue(0) > 1`, `object.status.conditions.filter(c, c != null && c != "not a map" && has(c.type)).map(c, c.type)`,
		`object.status.conditions[0].message`, `object.status.conditions[1].message == null`, `object.status.missing`,
		`object.spec.mixed[1] == 1`, `object.spec.mixed[3].k`, `object.spec.nested.flatten()`, `object.spec.tags.reverse()`,
		`object.spec.tags.join("-")`, `sets.contains(object.spec.tags, ["a"])`, `object.spec.tags.sort()`,
		`object.spec.containers.sortBy(c, c.name).map(c, c.name)`, `dyn(object.spec.tags) == dyn(object.spec.tags)`,
		`type(object.metadata) == map`, `type(object.spec.tags) == list`, `string(object.spec.replicas)`,
		`object.metadata.labels.app.upperAscii()`, `object.spec.containers[0] == {"name": "app", "image": "img:1", "ports": [{"port": 80}]}`,
		`object.spec.containers[0].ports[0] == {"port": 80}`, `[object.metadata.labels][0].tier`, `object.spec.tags.indexOf("c")`,
		`{"a": object.spec.tags}.a[0]`, `object.spec.replicas / 0`, `int(object.status.phase)`,
		`object.metadata.labels.map(k, k).sort()`, `object == object`, `object.spec.tags != object.spec.empty`,
	}
	refEnv, err := cel.NewEnv(celEnvOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	data := content()
	for _, expr := range exprs {
		t.Run(expr, func(t *testing.T) {
			refPrg := referenceProgram(t, refEnv, expr)
			refVal, _, refErr := refPrg.Eval(map[string]any{"object": types.DefaultTypeAdapter.NativeToValue(data)})
			want, wantErr := result(refVal, refErr)

			p, err := CompileCEL(expr, ResultAny)
			if err != nil {
				t.Fatal(err)
			}
			s := NewScope(data)
			ctx := startDeadline(time.Minute)
			defer ctx.release()
			val, _, err := p.program.ContextEval(ctx, &s.activation)
			got, gotErr := result(val, err)
			if gotErr != wantErr {
				t.Errorf("error %q, reference error %q", gotErr, wantErr)
			}
			if !cmp.Equal(want, got) && !unordered(expr) {
				t.Errorf("result differs (-reference +surveyor):\n%s", cmp.Diff(want, got))
			}
		})
	}
}

// referenceProgram compiles expr in a reference environment.
func referenceProgram(t *testing.T, env *cel.Env, expr string, opts ...cel.ProgramOption) cel.Program {
	t.Helper()
	ast, iss := env.Compile(expr)
	if iss.Err() != nil {
		t.Fatal(iss.Err())
	}
	prg, err := env.Program(ast, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return prg
}

// unordered is true for results built from map iteration, whose order is not defined.
func unordered(expr string) bool {
	return expr == `object.metadata.labels.transformMap(k, v, v + "!")`
}

// result turns an evaluation into comparable parts: the plain value, or the error text.
func result(v ref.Val, err error) (any, string) {
	if err != nil {
		return nil, err.Error()
	}
	n, convErr := toNative(v)
	if convErr != nil {
		return nil, fmt.Sprintf("convert %T: %v", v, convErr)
	}
	return n, ""
}

// TestListCostsMatchCELGo holds costEstimator's prices for ext.Lists to cel-go's: the same
// expressions cost the same in Surveyor's environment (ext.Lists version 2, priced by
// costEstimator) and in one with the latest ext.Lists, priced by cel-go's own trackers.
func TestListCostsMatchCELGo(t *testing.T) {
	refEnv, err := cel.NewEnv(envOptions(ext.Lists())...)
	if err != nil {
		t.Fatal(err)
	}
	exprs := []string{
		`object.spec.tags.slice(1, 3)`, `lists.range(50)`, `object.spec.tags.reverse()`, `object.spec.nested.flatten()`,
		`[[1, [2, [3]]], [4]].flatten(2)`, `[[1], [2]].flatten(0)`, `object.spec.tags.distinct()`, `[3, 1, 2, 1].distinct()`,
		`object.spec.tags.sort()`, `[3.5, 1.0].sort()`, `[true, false].sort()`, `[b"b", b"a"].sort()`, `[].sort()`,
		`object.spec.containers.sortBy(c, c.name).map(c, c.name)`, `[2, 1].sortBy(x, -x)`, `lists.range(30).sortBy(i, string(i))`,
		`[duration("1s"), duration("1m")].sort()`, `[timestamp("2025-01-01T00:00:00Z")].sort()`,
		`lists.range(20).map(i, lists.range(i).reverse().size()).sort()`, `sets.contains(object.spec.tags, ["a"])`,
		`size(indexes("0-99"))`, `"a,b".split(",")`, `object.spec.tags.join("-")`, `object.metadata.labels.app.reverse()`,
	}
	data := content()
	for _, expr := range exprs {
		t.Run(expr, func(t *testing.T) {
			refPrg := referenceProgram(t, refEnv, expr, cel.EvalOptions(cel.OptOptimize), cel.CostTracking(costEstimator{}))
			_, refDetails, refErr := refPrg.Eval(map[string]any{"object": data})
			p, err := CompileCEL(expr, ResultAny)
			if err != nil {
				t.Fatal(err)
			}
			ctx := startDeadline(time.Minute)
			defer ctx.release()
			_, details, err := p.program.ContextEval(ctx, &NewScope(data).activation)
			if (err != nil) != (refErr != nil) {
				t.Fatalf("error %v, reference error %v", err, refErr)
			}
			if got, want := *details.ActualCost(), *refDetails.ActualCost(); got != want {
				t.Errorf("cost %d, cel-go's cost %d", got, want)
			}
		})
	}
}

// withTimeLimit runs f with the per-call time limit set to limit.
func withTimeLimit(limit time.Duration, f func()) {
	defer setCallTimeLimit(limit)()
	f()
}

// TestEvaluationStopsAtEitherLimit shows both per-call limits stopping an evaluation, with the
// error that says which, and the scope charged the whole per-call cost limit either way.
func TestEvaluationStopsAtEitherLimit(t *testing.T) {
	tests := []struct {
		name   string
		limit  time.Duration
		expr   string
		detail string
	}{
		// 10^9 iterations that cost little each: the time limit stops them.
		{"time limit", time.Millisecond, `lists.range(1000).all(a, lists.range(1000).all(b, lists.range(1000).all(c, true)))`,
			"evaluation stopped after 1ms"},
		// A thousand lists of a thousand: over the cost limit long before a minute.
		{"cost limit", time.Minute, `lists.range(2000).map(i, lists.range(1000).size()).size() > 0`,
			"cost limit of 1000000 exceeded by one evaluation"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := CompileCEL(tt.expr, ResultBool)
			if err != nil {
				t.Fatal(err)
			}
			s := NewScope(content())
			withTimeLimit(tt.limit, func() {
				start := time.Now()
				_, err = p.EvalBool(s)
				if took := time.Since(start); took > tt.limit+10*time.Second {
					t.Errorf("took %s", took)
				}
			})
			want := fmt.Sprintf("expression %q: %s", tt.expr, tt.detail)
			if !errors.Is(err, ErrCostLimitExceeded) || err.Error() != want {
				t.Fatalf("error %v, want %q wrapping ErrCostLimitExceeded", err, want)
			}
			if got := s.Remaining(); got != CELObjectCostBudget-CELCallCostLimit {
				t.Errorf("remaining budget %d, want %d", got, CELObjectCostBudget-CELCallCostLimit)
			}
		})
	}
}

func TestDeadline(t *testing.T) {
	d := startDeadline(time.Hour)
	if at, ok := d.Deadline(); !ok || time.Until(at) < 59*time.Minute {
		t.Errorf("Deadline() = %v, %v", at, ok)
	}
	if d.Err() != nil {
		t.Errorf("Err() before the time is up = %v", d.Err())
	}
	d.release()

	d = startDeadline(time.Millisecond)
	select {
	case <-d.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("Done did not close")
	}
	if !errors.Is(d.Err(), context.DeadlineExceeded) {
		t.Errorf("Err() after the time is up = %v", d.Err())
	}
	d.release() // a fired deadline is dropped, not reused
	for range 100 {
		next := startDeadline(time.Hour)
		if next == d || next.Err() != nil {
			t.Fatal("a deadline whose time was up came back from the pool")
		}
		next.release()
	}
}

// BenchmarkDeadline compares a pooled deadline with context.WithTimeout, the cost it saves on
// every evaluation.
func BenchmarkDeadline(b *testing.B) {
	b.Run("WithTimeout", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ctx, cancel := context.WithTimeout(context.Background(), CELCallTimeLimit)
			ctx.Done()
			cancel()
		}
	})
	b.Run("Pooled", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			d := startDeadline(CELCallTimeLimit)
			d.Done()
			d.release()
		}
	})
}
