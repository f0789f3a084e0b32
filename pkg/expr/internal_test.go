package expr

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/util/jsonpath"
)

// content is unstructured content with every JSON shape the plans and adapters meet.
func content() map[string]any {
	return map[string]any{
		"apiVersion": "v1",
		"kind":       "Thing",
		"metadata":   map[string]any{"name": "thing", "generation": int64(3), "labels": map[string]any{"app": "web", "tier": "front"}},
		"spec": map[string]any{
			"replicas": int64(2),
			"ratio":    1.5,
			"enabled":  true,
			"nothing":  nil,
			"empty":    []any{},
			"emptyMap": map[string]any{},
			"tags":     []any{"a", "b", "c"},
			"nested":   []any{[]any{"x"}, []any{}, []any{"y", "z"}},
			"mixed":    []any{"s", int64(1), nil, map[string]any{"k": "v"}},
			"containers": []any{
				map[string]any{"name": "app", "image": "img:1", "ports": []any{map[string]any{"port": int64(80)}}},
				map[string]any{"name": "side", "image": "img:2"},
			},
		},
		"status": map[string]any{
			"observedGeneration": int64(3),
			"phase":              "Running",
			"conditions": []any{
				map[string]any{"type": "Ready", "status": "True", "message": "ok", "observedGeneration": int64(3)},
				map[string]any{"type": "Degraded", "status": "False", "message": nil},
				map[string]any{"type": "Count", "status": int64(3)},
				map[string]any{"status": "True"},
				nil,
				"not a map",
			},
		},
	}
}

// TestPlanMatchesClientGo runs every path through the plan and through client-go's evaluator and
// requires the same values (JSON null included), and the same error exactly when client-go errs.
func TestPlanMatchesClientGo(t *testing.T) {
	paths := []string{
		"{.kind}", "{.metadata.name}", "{.metadata.labels}", "{.metadata.labels.app}", "{.metadata.missing}",
		"{.metadata.name.deeper}", "{.spec.nothing}", "{.spec.nothing.deeper}", "{.spec.replicas}", "{.spec.ratio}",
		"{.spec.enabled}", "{.spec.tags}", "{.spec.tags[0]}", "{.spec.tags[2]}", "{.spec.tags[3]}", "{.spec.tags[-1]}",
		"{.spec.tags[-4]}", "{.spec.tags[*]}", "{.spec.empty[*]}", "{.spec.empty[0]}", "{.spec.emptyMap}",
		"{.spec.emptyMap.x}", "{.spec.nested[*][*]}", "{.spec.nested[*][0]}", "{.spec.mixed[*]}", "{.spec.mixed[*].k}",
		"{.spec.containers[*].name}", "{.spec.containers[*].ports[*].port}", "{.spec.containers[1].ports}",
		"{.spec.containers[0].ports[0].port}", "{.spec.replicas[0]}", "{.spec.replicas[*]}", "{.metadata[*]}",
		`{.spec.containers[?(@.name=="side")].image}`, `{.spec.containers[?(@.name!="side")].image}`,
		`{.spec.containers[?(@.ports)].name}`, `{.spec.containers[?(@.missing)].name}`,
		`{.spec.containers[?(@.name=="none")].image}`, `{.status.conditions[?(@.type=="Ready")].status}`,
		`{.status.conditions[?(@.status=="True")].type}`, `{.status.conditions[?(@.type)].type}`,
		`{.spec.tags[?(@=="b")]}`, `{.spec.replicas[?(@.x=="y")]}`, `{.spec.nothing[?(@.x=="y")]}`,
		`{.spec.containers[?(@.ports[0].port==80)].name}`, `{.status.conditions[?(@.status==3)].type}`,
		"{$.kind}", "{.spec.tags[0:2]}", "{..name}", "{.spec.*}", "{.spec.tags[0,1]}", "{.spec['replicas']}",
		"{.spec.mixed[2]}", "{.spec.nothing[0]}", "{.spec.nothing[*]}", `{.spec.mixed[?(@.k=="v")].k}`, "{.spec.nested[-1][-2]}",
	}
	data := content()
	planned := 0
	for _, text := range paths {
		t.Run(text, func(t *testing.T) {
			ref := jsonpath.New("ref")
			if err := ref.Parse(text); err != nil {
				t.Fatal(err)
			}
			results, refErr := ref.FindResults(data)
			var want []any
			for _, set := range results {
				for _, v := range set {
					if x, ok := value(v); ok {
						want = append(want, x)
					}
				}
			}
			p, err := ParsePath(text)
			if err != nil {
				t.Fatal(err)
			}
			if p.plan == nil {
				return
			}
			planned++
			got, err, ok := p.plan.find(data)
			if !ok {
				if refErr == nil {
					t.Logf("plan gave up where client-go answered %v", want)
				}
				return
			}
			if len(got) == 0 {
				got = nil
			}
			if (err != nil) != (refErr != nil) {
				t.Fatalf("plan error %v, client-go error %v", err, refErr)
			}
			if err != nil {
				if err.Error() != refErr.Error() {
					t.Errorf("plan error %q, client-go error %q", err, refErr)
				}
				return
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("values differ (-client-go +plan):\n%s", diff)
			}
		})
	}
	if planned < 35 {
		t.Errorf("only %d of %d paths have a plan", planned, len(paths))
	}
}

// TestCELMatchesReference evaluates expressions with Surveyor's adapter, fast path and tracked path,
// and with a plain cel-go environment, and requires the same results.
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
			ast, iss := refEnv.Compile(expr)
			if iss.Err() != nil {
				t.Fatal(iss.Err())
			}
			refPrg, err := refEnv.Program(ast)
			if err != nil {
				t.Fatal(err)
			}
			refVal, _, refErr := refPrg.Eval(map[string]any{"object": types.DefaultTypeAdapter.NativeToValue(data)})
			want, wantErr := result(refVal, refErr)

			p, err := CompileCEL(expr, ResultAny)
			if err != nil {
				t.Fatal(err)
			}
			s := NewScope(data)
			for name, prg := range map[string]cel.Program{"fast": p.fast, "tracked": p.tracked} {
				val, _, err := prg.Eval(&s.activation)
				got, gotErr := result(val, err)
				if gotErr != wantErr {
					t.Errorf("%s: error %q, reference error %q", name, gotErr, wantErr)
				}
				if !cmp.Equal(want, got) && !unordered(expr) {
					t.Errorf("%s: result differs (-reference +surveyor):\n%s", name, cmp.Diff(want, got))
				}
			}
		})
	}
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

// TestBoundCoversActualCost checks the premise of the untracked fast path: whenever a Program has
// a bound for an object, the cost cel-go's tracker measures is within it.
func TestBoundCoversActualCost(t *testing.T) {
	big := content()
	tags := make([]any, 300)
	for i := range tags {
		tags[i] = fmt.Sprintf("tag-%d-%s", i, strings.Repeat("x", i))
	}
	big["spec"].(map[string]any)["tags"] = tags
	big["metadata"].(map[string]any)["labels"].(map[string]any)["long"] = strings.Repeat("y", 5000)
	exprs := []string{
		`object.spec.tags.exists(t, t == "tag-299")`, `object.spec.tags.all(t, t.startsWith("tag-"))`,
		`object.spec.tags.filter(t, t.contains("xxxx")).size() > 3`, `object.spec.tags.map(t, t + "!").size()`,
		`object.metadata.labels.exists(k, object.metadata.labels[k].size() > 100)`, `object.metadata.labels.long.matches("^y+$")`,
		`object.spec.tags.join(",").size()`, `object.spec.tags.all(a, object.spec.tags.exists(b, a == b))`,
		`object.status.conditions.exists(c, c != null && c != "not a map" && has(c.type) && c.type == "Ready")`,
		`object.metadata.labels.all(k, v, k + v != "")`, `object.spec.tags.sort()[0]`, `object.spec.containers.map(c, c.image).join(" ")`,
		`object.metadata.labels.long.split("y").size()`, `object.metadata.labels.long.replace("y", "zz").size()`,
		`object.spec.tags.size() > 2 && object.spec.replicas * 2 + 1 > 3`, `"tag-5-xxxxx" in object.spec.tags`,
		`has(object.status.phase) ? object.status.phase + "!" : ""`, `object.metadata.labels.long + object.metadata.labels.app`,
		`object.metadata.labels.long < object.metadata.labels.app`, `object.metadata.labels.long.endsWith("yy")`,
		`object.metadata.labels.long.contains(object.metadata.labels.app)`, `object.spec.tags.exists_one(t, t.size() > 200)`,
		`object.spec.tags.map(t, t.size()).filter(n, n % 2 == 0).size()`, `object.spec.containers.all(c, has(c.ports) || c.name == "side")`,
		`object.status.conditions.filter(c, type(c) == map).exists(c, has(c.status) && c.status == "True")`,
		`string(object.spec.replicas) + "/" + string(size(object.spec.tags))`, `object.spec.ratio > 1.0 || !object.spec.enabled`,
		`object.kind == "Thing" && object.metadata.name.startsWith("th")`, `object.spec.missing == 1`, `object.spec.tags[400] == "x"`,
		`object.?spec.?replicas.orValue(0) > 1`, `object.?status.?missing.orValue(0) == 0`, `object.spec.?tags[?7].hasValue()`,
		`object.?metadata.?labels.?long.orValue("") == "y"`, `optional.ofNonZeroValue(object.spec.tags).hasValue()`,
		`object.metadata.labels[?"long"].orValue("").size() > 3`, `object.spec.containers.exists(c, c.?ports[?0].?port.orValue(0) == 80)`,
	}
	for _, expr := range exprs {
		p, err := CompileCEL(expr, ResultAny)
		if err != nil {
			t.Fatal(err)
		}
		for name, obj := range map[string]map[string]any{"small": content(), "big": big} {
			s := NewScopeWithBudget(obj, ^uint64(0))
			bound := p.bound(s)
			_, details, err := p.tracked.Eval(&s.activation)
			if err != nil && !strings.Contains(err.Error(), "no such") && !strings.Contains(err.Error(), "out of bounds") {
				t.Errorf("%s on %s: %v", expr, name, err)
				continue
			}
			actual := *details.ActualCost()
			if bound != unbounded && bound < actual {
				t.Errorf("%s on %s: bound %d below actual cost %d", expr, name, bound, actual)
			}
			t.Logf("%s on %s: bound %d, actual %d", expr, name, bound, actual)
		}
	}
}

// TestTypicalExpressionsRunUntracked guards the speed of typical health and completion
// expressions: they must get a bound on a typical object, so that they skip the runtime tracker.
func TestTypicalExpressionsRunUntracked(t *testing.T) {
	exprs := []string{
		`object.status.conditions.exists(c, c.type == "Ready" && c.status == "True")`,
		`object.status.readyReplicas >= object.spec.replicas`,
		`has(object.status.phase) && object.status.phase == "Running"`,
		`object.?status.?succeeded.orValue(0) > 0`,
		`"succeeded: " + string(object.status.succeeded)`,
		`size(indexes(object.status.completedIndexes)) == object.spec.completions`,
		`object.metadata.name.startsWith("web") && object.status.conditions.all(c, c.status != "False")`,
	}
	obj := content()
	for _, expr := range exprs {
		p, err := CompileCEL(expr, ResultAny)
		if err != nil {
			t.Fatal(err)
		}
		if b := p.bound(NewScope(obj)); b == unbounded {
			t.Errorf("%s has no bound; it would run under the slow tracker", expr)
		}
	}
}
