package expr

import (
	"testing"

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
			want := values(results)
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
			if diff := cmp.Diff(want, got, mapOrderFree(p)); diff != "" {
				t.Errorf("values differ (-client-go +plan):\n%s", diff)
			}
		})
	}
	if planned < 35 {
		t.Errorf("only %d of %d paths have a plan", planned, len(paths))
	}
}
