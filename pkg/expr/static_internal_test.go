package expr

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/google/cel-go/common/types"
)

// staticObject is content() with a long string and a longer list, so that sizes differ from path
// to path and the largest one is not where every expression reads.
func staticObject() map[string]any {
	obj := content()
	obj["metadata"].(map[string]any)["annotations"] = map[string]any{"note": strings.Repeat("ü", 40)}
	items := make([]any, 50)
	for i := range items {
		items[i] = map[string]any{"name": "item-" + strconv.Itoa(i), "n": int64(i), "tags": []any{"a", "bb"}}
	}
	obj["spec"].(map[string]any)["items"] = items
	return obj
}

// staticExpressions are expressions over staticObject of every shape the estimate meets:
// selections on dyn values, comprehensions over object lists and maps, nested ones, string
// functions priced by size, the Kubernetes libraries, ext.Lists, indexes, and optionals.
var staticExpressions = []string{
	`object.kind`, `object.spec.replicas + 1`, `object.status.phase == "Running"`,
	`object.status.conditions.exists(c, c != null && c != "not a map" && has(c.type) && c.type == "Ready" && c.status == "True")`,
	`object.spec.containers.all(c, c.name != "" && c.image.startsWith("img:"))`,
	`object.spec.containers.map(c, c.name)`, `object.spec.containers.filter(c, has(c.ports)).map(c, c.ports[0].port)`,
	`object.spec.items.exists_one(i, i.n == 3)`, `object.spec.items.map(i, i.name.size()).sum()`,
	`object.spec.items.all(a, object.spec.tags.all(b, a.name != b))`,
	`object.spec.items.exists(i, i.tags.exists(t, t == "bb"))`,
	`object.metadata.labels.all(k, k.size() > 2)`, `object.metadata.labels.exists(k, v, v == "web")`,
	`object.spec.tags.all(i, v, i < 3 && v != "")`, `"b" in object.spec.tags`, `"app" in object.metadata.labels`,
	`object.metadata.annotations.note.contains("üü")`, `object.metadata.annotations.note.matches("^ü+$")`,
	`object.metadata.annotations.note.lowerAscii().size()`, `object.metadata.annotations.note.split("ü").size()`,
	`object.metadata.annotations.note + object.metadata.name`, `object.metadata.annotations.note == object.metadata.name`,
	`object.spec.tags.join("-")`, `object.spec.tags.reverse()`, `object.spec.tags.sort()`, `object.spec.tags.distinct()`,
	`object.spec.nested.flatten()`, `object.spec.items.sortBy(i, -i.n)[0].n`, `object.spec.tags.slice(1, 2)`,
	`sets.contains(object.spec.tags, ["a"])`, `object.spec.tags + ["d"]`, `size(object.spec.tags) * 2`,
	`object.?status.?missing.orValue("none")`, `object.?spec.replicas.orValue(0) > 1`,
	`string(object.metadata.annotations.note) + "x"`, `string(object.metadata.annotations.note).size() > 3`,
	`object["spec"]["tags"][1]`, `object.spec.containers[0].ports[0] == {"port": 80}`,
	`size(indexes("0-2,5")) == 4`, `indexes(object.metadata.name).size()`, `quantity("1Gi").isGreaterThan(quantity("1Mi"))`,
	`url("https://example.com/a").getHost()`, `string(object.spec.replicas) + "x"`,
	`object.spec.items.map(i, i.name + i.name).exists(s, s.size() > 100)`,
	`object.status.conditions[0].message`, `object.status.missing`, `object.spec.replicas / 0`,
	`object.spec.items.transformList(i, v, v.n * i).size()`, `object.metadata.labels.transformMap(k, v, v + k).size()`,
}

// TestStaticCostIsAnUpperBound holds the charge of an untracked evaluation, the static bound at
// the measured size, to the tracked program's actual cost of the same evaluation.
func TestStaticCostIsAnUpperBound(t *testing.T) {
	obj := staticObject()
	bounded := 0
	for _, text := range staticExpressions {
		t.Run(text, func(t *testing.T) {
			p, err := CompileCEL(text, ResultAny)
			if err != nil {
				t.Fatal(err)
			}
			tracked := p.runTracked(NewScopeWithBudget(obj, ^uint64(0)))
			if p.static == nil {
				t.Logf("no static bound; actual cost %d", tracked.cost)
				return
			}
			n, ok := p.static.paths.measure(obj)
			if !ok {
				t.Fatal("could not measure the object")
			}
			bound, ok := p.static.bound(n)
			if !ok {
				t.Logf("no bound at size %d; actual cost %d", n, tracked.cost)
				return
			}
			bounded++
			if tracked.stopped {
				t.Fatalf("bound %d, but the tracked evaluation was stopped: %v", bound, tracked.err)
			}
			if bound < tracked.cost {
				t.Errorf("bound %d at size %d is below the actual cost %d", bound, n, tracked.cost)
			}
			untracked := p.run(NewScopeWithBudget(obj, ^uint64(0)))
			if untracked.cost != bound {
				t.Errorf("untracked evaluation charged %d, want its bound %d", untracked.cost, bound)
			}
			if got, want := errString(untracked.err), errString(tracked.err); got != want {
				t.Errorf("untracked error %q, tracked error %q", got, want)
			}
			if untracked.err == nil && untracked.val.Equal(tracked.val) != types.True {
				t.Errorf("untracked result %v, tracked result %v", untracked.val, tracked.val)
			}
			t.Logf("size %d, bound %d, actual cost %d", n, bound, tracked.cost)
		})
	}
	if bounded < len(staticExpressions)/2 {
		t.Errorf("only %d of %d expressions have a bound", bounded, len(staticExpressions))
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestStaticallyBoundedRunsUntracked shows which program runs: the untracked one, charged its
// bound, when the bound at the object's sizes fits the limit and the budget, and the tracked one,
// charged its actual cost, otherwise.
func TestStaticallyBoundedRunsUntracked(t *testing.T) {
	const text = `object.status.conditions.exists(c, c != null && c != "not a map" && has(c.type) && c.type == "Ready")`
	p, err := CompileCEL(text, ResultBool)
	if err != nil {
		t.Fatal(err)
	}
	obj := content()
	n, ok := p.static.paths.measure(obj)
	if !ok {
		t.Fatal("could not measure the object")
	}
	bound, ok := p.static.bound(n)
	if !ok {
		t.Fatalf("no bound at size %d", n)
	}
	actual := p.runTracked(NewScopeWithBudget(obj, ^uint64(0))).cost
	if actual == bound {
		t.Fatalf("bound and actual cost are both %d: the test cannot tell the programs apart", bound)
	}

	s := NewScopeWithBudget(obj, 10*bound)
	if ok, err := p.EvalBool(s); !ok || err != nil {
		t.Fatalf("EvalBool = %v, %v", ok, err)
	}
	if got := 10*bound - s.Remaining(); got != bound {
		t.Errorf("charged %d, want the bound %d (untracked)", got, bound)
	}

	// A budget below the bound: the tracked program runs, and is charged its actual cost.
	s = NewScopeWithBudget(obj, bound-1)
	if ok, err := p.EvalBool(s); !ok || err != nil {
		t.Fatalf("EvalBool = %v, %v", ok, err)
	}
	if got := bound - 1 - s.Remaining(); got != actual {
		t.Errorf("charged %d, want the actual cost %d (tracked)", got, actual)
	}

	// A larger object: the bound grows with the size of what the expression reads.
	big := content()
	conds := make([]any, 1000)
	for i := range conds {
		conds[i] = map[string]any{"type": "T" + strconv.Itoa(i)}
	}
	big["status"].(map[string]any)["conditions"] = conds
	m, _ := p.static.paths.measure(big)
	if bigBound, ok := p.static.bound(m); ok && bigBound <= bound {
		t.Errorf("bound %d at size %d, not above %d at size %d", bigBound, m, bound, n)
	}

	// Sizes where the expression does not read do not count.
	other := content()
	other["spec"].(map[string]any)["tags"] = make([]any, 100_000)
	if m, _ := p.static.paths.measure(other); m != n {
		t.Errorf("measured %d with a long list the expression does not read, want %d", m, n)
	}
}

// TestUnboundedExpressionsRunTracked shows that expressions whose cost the object's sizes do not
// bound, or bound above the limit, run tracked and are still stopped at the cost limit.
func TestUnboundedExpressionsRunTracked(t *testing.T) {
	items := make([]any, 300)
	for i := range items {
		items[i] = map[string]any{"n": int64(i)}
	}
	obj := map[string]any{"spec": map[string]any{"count": int64(2_000), "items": items}}
	for _, text := range []string{
		// The size of the range is a number from the object, which has no static bound.
		`lists.range(object.spec.count).all(i, lists.range(object.spec.count).all(j, i != j || i == j))`,
		// Nested comprehensions over an object list: bounded, but far over the limit at 300.
		`object.spec.items.all(a, object.spec.items.all(b, object.spec.items.all(c, a.n + b.n + c.n >= 0)))`,
	} {
		t.Run(text, func(t *testing.T) {
			p, err := CompileCEL(text, ResultBool)
			if err != nil {
				t.Fatal(err)
			}
			if p.static != nil {
				n, ok := p.static.paths.measure(obj)
				if _, bounded := p.static.bound(n); ok && bounded {
					t.Fatalf("bounded at size %d, want no bound", n)
				}
			}
			s := NewScope(obj)
			_, err = p.EvalBool(s)
			if !errors.Is(err, ErrCostLimitExceeded) {
				t.Fatalf("error %v, want ErrCostLimitExceeded", err)
			}
			if got := s.Remaining(); got != CELObjectCostBudget-CELCallCostLimit {
				t.Errorf("remaining %d, want %d", got, CELObjectCostBudget-CELCallCostLimit)
			}
		})
	}
}
