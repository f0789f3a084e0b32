package expr_test

import (
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/surveyor-dev/surveyor/pkg/expr"
)

// allocated returns the bytes f allocated, as runtime.MemStats counts them.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// maxAllocation is what a refused expression may allocate, compilation included (DESIGN §12,
// issue 28: peak growth ≤ 16 MiB for an expression that tries to allocate 1 GiB).
const maxAllocation = 16 << 20

// TestCallsOverTheLimitsAreRefusedBeforeTheyAllocate evaluates expressions that each try to
// make a value of a gigabyte or more, with calls that allocate in proportion to an argument.
// Each is refused, before the call runs, with ErrCostLimitExceeded and a message that names
// the limit, and the whole compilation and evaluation allocates at most 16 MiB.
func TestCallsOverTheLimitsAreRefusedBeforeTheyAllocate(t *testing.T) {
	// The refusals are checked, not the clock: under the race detector on a loaded machine
	// building a call's arguments can take longer than the 100 ms a call is allowed.
	defer expr.SetCallTimeLimit(time.Minute)()
	tests := []struct{ name, expr, detail string }{
		{"lists.range", `lists.range(1073741824).size() > 0`,
			"lists.range(1073741824) would make a list of 1073741824 elements, over the limit of 100000"},
		{"lists.range of an object's number", `lists.range(object.spec.completions * 1000000000).size() > 0`,
			"lists.range(3000000000) would make a list of 3000000000 elements, over the limit of 100000"},
		// Each replace makes the string a thousand times longer than the one before.
		{"replace", `'abc'.replace('', 'x'.repeatedly()).size() > 0`, ""},
		{"string doubling", `[object.metadata.name].map(s, s + s + s + s).map(s, s + s + s + s).map(s, s + s + s + s).map(s, s + s + s + s).map(s, s + s + s + s).map(s, s + s + s + s).map(s, s + s + s + s).map(s, s + s + s + s).map(s, s + s + s + s).map(s, s + s + s + s).map(s, s + s + s + s).map(s, s + s + s + s).map(s, s + s + s + s).map(s, s + s + s + s).map(s, s + s + s + s).size() > 0`,
			"string concatenation would make a string of 2097152 bytes, over the limit of 1048576"},
		{"list doubling", `[lists.range(1000)].map(l, l + l + l + l).map(l, l + l + l + l).map(l, l + l + l + l).map(l, l + l + l + l).map(l, l + l + l + l).map(l, l + l + l + l).map(l, l + l + l + l).map(l, l + l + l + l).map(l, l + l + l + l).map(l, l + l + l + l).size() > 0`,
			"list concatenation would make a list of 128000 elements, over the limit of 100000"},
		{"join with a long separator", `lists.range(1100).map(i, '').join(object.spec.big.substring(0, 1000000)).size() > 0`,
			"join would make a string of 1099000000 bytes, over the limit of 1048576"},
		{"split into runes", `object.spec.big.split('').size() > 0`,
			"split would make a list of 2000001 elements, over the limit of 100000"},
		{"flatten of one list many times", `lists.range(1000).map(i, object.spec.items).flatten().size() > 0`,
			"flatten would make a list of 100002 elements or more, over the limit of 100000"},
		{"format precision", `'%.1073741824f'.format([1.0]).size() > 0`,
			"format would make a string of 2097229 bytes, over the limit of 1048576"},
		{"quote", `strings.quote(object.spec.big).size() > 0`,
			"strings.quote would make a string of 6000002 bytes, over the limit of 1048576"},
		{"regular expression", `object.metadata.name.matches('(?:' + object.spec.big.substring(0, 1000) + '){1000}')`,
			`the regular expression "(?:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa..." would compile to 100000 instructions or more, over the limit of 50000`},
		{"constant regular expression", `'x'.matches('(?:` + strings.Repeat("a", 1000) + `){1000}')`,
			`the regular expression "(?:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa..." would compile to 100000 instructions or more, over the limit of 50000`},
		{"quantity exponent", `quantity('1e2000000000').isGreaterThan(quantity('1'))`,
			`quantity("1e2000000000") has an exponent over the limit of 1000`},
		{"sort", `object.spec.items.sort().size() > 0`,
			"sort of a list of 2000 elements would cost 4000000 comparisons, over the per-call cost limit of 1000000"},
	}
	obj := map[string]any{
		"metadata": map[string]any{"name": "x"},
		"spec": map[string]any{
			"completions": int64(3),
			"big":         strings.Repeat("a", 2_000_000),
			"items": func() []any {
				l := make([]any, 2000)
				for i := range l {
					l[i] = int64(i)
				}
				return l
			}(),
		},
	}
	for _, tt := range tests {
		if tt.name == "replace" {
			// 1000 x's; each replace puts them before every character and at the end, so
			// three would make a gigabyte: the second is refused.
			x := "'" + strings.Repeat("x", 1000) + "'"
			tt.expr = `'abc'.replace('', ` + x + `).replace('', ` + x + `).replace('', ` + x + `).size() > 0`
			tt.detail = "replace would make a string of 4008003 bytes, over the limit of 1048576"
		}
		t.Run(tt.name, func(t *testing.T) {
			var err error
			bytes := allocated(func() {
				var p *expr.Program
				p, err = expr.CompileCEL(tt.expr, expr.ResultBool)
				if err == nil {
					_, err = p.EvalBool(expr.NewScope(obj))
				}
			})
			want := `expression "` + strings.ReplaceAll(tt.expr, `"`, `\"`) + `": ` + tt.detail
			if !errors.Is(err, expr.ErrCostLimitExceeded) || err.Error() != want {
				t.Errorf("error %v,\nwant %s wrapping ErrCostLimitExceeded", err, want)
			}
			if bytes > maxAllocation && !raceDetector {
				t.Errorf("allocated %d MiB, want at most %d MiB", bytes>>20, maxAllocation>>20)
			}
			t.Logf("allocated %d KiB", bytes>>10)
		})
	}
}

// TestCallsWithinTheLimitsRun shows the guarded calls working below their limits.
func TestCallsWithinTheLimitsRun(t *testing.T) {
	for _, text := range []string{
		`lists.range(100000).size() == 100000`,
		`'a-b-c'.replace('-', '--') == 'a--b--c'`,
		`'a,b,c'.split(',').size() == 3 && 'a,b,c'.split(',', 2).size() == 2`,
		`['a', 'b'].join('-') == 'a-b' && ['a', 'b'].join() == 'ab'`,
		`'%s is %.2f'.format(['pi', 3.14159]) == 'pi is 3.14'`,
		`strings.quote('a"b') == '"a\\"b"'`,
		`[[1, 2], [3]].flatten() == [1, 2, 3]`,
		`[3, 1, 2].sort() == [1, 2, 3] && [1, 1].distinct() == [1]`,
		`sets.contains([1, 2], [1]) && sets.intersects([1], [1]) && sets.equivalent([1], [1])`,
		`'abc'.matches('^a.c$') && 'abc'.find('b') == 'b' && 'aXbX'.findAll('X').size() == 2`,
		`quantity('1e3').isGreaterThan(quantity('1')) && quantity('1E').isGreaterThan(quantity('1Pi'))`,
		`'a' + 'b' == 'ab' && b'a' + b'b' == b'ab' && [1] + [2] == [1, 2] && 1 + 2 == 3`,
		`dyn('a') + dyn('b') == 'ab'`,
	} {
		t.Run(text, func(t *testing.T) {
			p, err := expr.CompileCEL(text, expr.ResultBool)
			if err != nil {
				t.Fatal(err)
			}
			if ok, err := p.EvalBool(expr.NewScope(nil)); !ok || err != nil {
				t.Errorf("got %v, %v", ok, err)
			}
		})
	}
}

// TestCompilationIsBounded shows the parser's limits: an expression too long or too deep is
// refused before the planner, which evaluates constant parts with no cost tracking, sees it.
func TestCompilationIsBounded(t *testing.T) {
	for name, text := range map[string]string{
		"long":          "[" + strings.Repeat("1,", expr.CELMaxExpressionSize/2) + "1].size() > 0",
		"deep":          strings.Repeat("[", 100) + strings.Repeat("]", 100) + " == []",
		"long constant": "'" + strings.Repeat("a", expr.CELMaxExpressionSize) + "' == ''",
	} {
		t.Run(name, func(t *testing.T) {
			var err error
			if bytes := allocated(func() { _, err = expr.CompileCEL(text, expr.ResultBool) }); bytes > maxAllocation {
				t.Errorf("allocated %d MiB", bytes>>20)
			}
			if !errors.Is(err, expr.ErrInvalidExpression) {
				t.Errorf("error %v, want ErrInvalidExpression", err)
			}
		})
	}
}

// TestPathRecursiveDescentsAreBounded: a second recursive descent would find as many values as
// the object's size squared, so a path may have one.
func TestPathRecursiveDescentsAreBounded(t *testing.T) {
	if _, err := expr.ParsePath("..name"); err != nil {
		t.Errorf("one recursive descent: %v", err)
	}
	for _, text := range []string{"..a..b", "spec..a[?(@..b)]", "..a..b..c..d"} {
		_, err := expr.ParsePath(text)
		var syntaxErr *expr.SyntaxError
		if !errors.As(err, &syntaxErr) || !strings.Contains(err.Error(), "over the limit of 1") {
			t.Errorf("ParsePath(%q) = %v, want a SyntaxError naming the limit", text, err)
		}
	}
}
