package expr_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/health"
	"github.com/surveyor-dev/surveyor/pkg/render/selector"
	"github.com/surveyor-dev/surveyor/pkg/render/stamp"
)

// crossObject is the object every path of TestOneAnswerEverywhere reads: as the stamped object
// for health rules and output paths, as the Workload for selectors, and as context.workload for
// $(...)$ tags. Its numbers have the types an unstructured object holds (int64 and float64).
func crossObject() map[string]any {
	return map[string]any{
		"apiVersion": "carto.run/v1alpha1",
		"kind":       "Workload",
		"metadata": map[string]any{
			"name": "app",
			"labels": map[string]any{
				"app.kubernetes.io/name": "petclinic",
				"tier":                   "web",
			},
			"annotations": map[string]any{"example.com/owner": "team-a"},
		},
		"spec": map[string]any{
			"replicas": int64(3),
			"huge":     1e21,
			"tiny":     1e-7,
			"ratio":    2.5,
			"whole":    3.0,
			"big":      int64(9007199254740993),
			"on":       true,
			"off":      false,
			"nothing":  nil,
			"empty":    "",
			"greeting": "grüß dich",
			"limits":   map[string]any{"cpu": "500m", "memory": int64(1024), "ratio": 1e21},
			"tags":     []any{"blue", "green"},
			"sparse":   []any{nil, "x", int64(7)},
			"numbers":  []any{int64(1), 1e-7},
		},
		"status": map[string]any{
			"conditions": []any{
				map[string]any{"type": "Ready", "status": "True", "message": "all good"},
				map[string]any{"type": "Stalled", "status": "False"},
			},
		},
	}
}

// pathForms are the spellings of one path that every place accepts: bare, with a leading dot,
// in braces, from the root $, and with white space around it.
var pathForms = []struct {
	name string
	of   func(bare string) string
}{
	{"bare", func(p string) string { return p }},
	{"dot", func(p string) string { return "." + p }},
	{"braces", func(p string) string { return "{." + p + "}" }},
	{"root", func(p string) string { return "$." + p }},
	{"spaces", func(p string) string { return "  " + p + " " }},
}

// TestOneAnswerEverywhere runs every path and value form through the four places a user writes
// a jsonpath (health rules, selectors, output paths, $(...)$ tags) and expects the one answer
// pkg/expr gives: the same values found, the same string form, the same verdict.
//
// The answer for a path is the list of values it selects (JSON null included). From it:
//
//   - matchFields, in a health rule and in a selector alike: the non-null values count; Exists
//     holds when there is one, DoesNotExist when there is none, In when any value's string form
//     is listed, NotIn when there is a value and none is listed;
//   - messagePath: the string form of the first non-null value, or "" when there is none;
//   - an output path: the one value, or the list of several; no value, or a null one, is missing;
//   - a tag that is a whole string: the one value (null included), or the list of several; no
//     value fails the stamp. A tag inside a longer string: that value's string form.
//
// The string form is expr.ValueString: a string as it is, numbers in plain decimal without an
// exponent (3, 2.5, 0.0000001, 1000000000000000000000), booleans as true and false, null as the
// empty string, maps and lists as JSON written with the same number rule.
func TestOneAnswerEverywhere(t *testing.T) {
	tests := []struct {
		name string
		path string // the bare form, relative to the object
		want []any  // the values the path selects
		text string // the string form of the first non-null value
	}{
		{"string", "metadata.name", []any{"app"}, "app"},
		{"unicode string", "spec.greeting", []any{"grüß dich"}, "grüß dich"},
		{"empty string", "spec.empty", []any{""}, ""},
		{"integer", "spec.replicas", []any{int64(3)}, "3"},
		{"integer beyond float precision", "spec.big", []any{int64(9007199254740993)}, "9007199254740993"},
		{"1e21", "spec.huge", []any{1e21}, "1000000000000000000000"},
		{"1e-7", "spec.tiny", []any{1e-7}, "0.0000001"},
		{"fraction", "spec.ratio", []any{2.5}, "2.5"},
		{"whole float", "spec.whole", []any{3.0}, "3"},
		{"true", "spec.on", []any{true}, "true"},
		{"false", "spec.off", []any{false}, "false"},
		{"null", "spec.nothing", []any{nil}, ""},
		{"map", "spec.limits", []any{map[string]any{"cpu": "500m", "memory": int64(1024), "ratio": 1e21}},
			`{"cpu":"500m","memory":1024,"ratio":1000000000000000000000}`},
		{"list", "spec.tags", []any{[]any{"blue", "green"}}, `["blue","green"]`},
		{"list of numbers", "spec.numbers", []any{[]any{int64(1), 1e-7}}, `[1,0.0000001]`},
		{"index", "spec.tags[1]", []any{"green"}, "green"},
		{"negative index", "spec.tags[-1]", []any{"green"}, "green"},
		{"wildcard", "spec.tags[*]", []any{"blue", "green"}, "blue"},
		{"wildcard with null", "spec.sparse[*]", []any{nil, "x", int64(7)}, "x"},
		{"key with dots and slash, single quotes", "metadata.labels['app.kubernetes.io/name']", []any{"petclinic"}, "petclinic"},
		{"key with dots and slash, double quotes", `metadata.labels["app.kubernetes.io/name"]`, []any{"petclinic"}, "petclinic"},
		{"key with dots and slash, escaped", `metadata.labels.app\.kubernetes\.io/name`, []any{"petclinic"}, "petclinic"},
		{"bracket key with slash", "metadata.annotations['example.com/owner']", []any{"team-a"}, "team-a"},
		{"plain bracket key", "metadata.labels['tier']", []any{"web"}, "web"},
		{"filter", `status.conditions[?(@.type=="Ready")].status`, []any{"True"}, "True"},
		{"filter, single quotes", `status.conditions[?(@.type=='Ready')].message`, []any{"all good"}, "all good"},
		{"filter, not equal", `status.conditions[?(@.type!="Ready")].type`, []any{"Stalled"}, "Stalled"},
		{"filter matching nothing", `status.conditions[?(@.type=="Gone")].status`, nil, ""},
		{"filter, field missing in the match", `status.conditions[?(@.type=="Stalled")].message`, nil, ""},
		{"missing key", "spec.image", nil, ""},
		{"missing below null", "spec.nothing.deeper", nil, ""},
		{"missing below a string", "metadata.name.deeper", nil, ""},
		{"index out of range", "spec.tags[5]", nil, ""},
	}
	for _, tt := range tests {
		for _, form := range pathForms {
			path := form.of(tt.path)
			t.Run(tt.name+"/"+form.name, func(t *testing.T) {
				var present []any
				for _, v := range tt.want {
					if v != nil {
						present = append(present, v)
					}
				}
				exists := len(present) > 0
				matchFields := []struct {
					op     v1alpha1.FieldSelectorOperator
					values []string
					want   bool
				}{
					{v1alpha1.FieldSelectorOpExists, nil, exists},
					{v1alpha1.FieldSelectorOpDoesNotExist, nil, !exists},
					{v1alpha1.FieldSelectorOpIn, []string{"no such value", tt.text}, exists},
					{v1alpha1.FieldSelectorOpIn, []string{"no such value"}, false},
					{v1alpha1.FieldSelectorOpNotIn, []string{tt.text}, false},
					{v1alpha1.FieldSelectorOpNotIn, []string{"no such value"}, exists},
				}
				for _, mf := range matchFields {
					req := v1alpha1.FieldSelectorRequirement{Key: path, Operator: mf.op, Values: mf.values}
					checkHealthField(t, req, mf.want, tt.text)
					checkSelectorField(t, req, mf.want)
				}
				checkMessagePath(t, path, tt.text)
				checkOutput(t, path, tt.want)
				checkTag(t, form.of("workload."+tt.path), tt.want)
			})
		}
	}
}

func checkHealthField(t *testing.T, req v1alpha1.FieldSelectorRequirement, want bool, text string) {
	t.Helper()
	rule := &v1alpha1.HealthRule{MultiMatch: &v1alpha1.MultiMatchRule{
		Healthy:   v1alpha1.MatchRule{MatchFields: []v1alpha1.HealthMatchFieldSelectorRequirement{{FieldSelectorRequirement: req}}},
		Unhealthy: v1alpha1.MatchRule{MatchConditions: []v1alpha1.ConditionRequirement{{Type: "NeverSet", Status: "True"}}},
	}}
	c := health.Evaluate(health.Input{Rule: rule, Object: &unstructured.Unstructured{Object: crossObject()}, HasOutputs: true, OutputsRead: true})
	got := c.Status == metav1.ConditionTrue
	if got != want || (c.Status != metav1.ConditionTrue && c.Reason != v1alpha1.ReasonNoMatchesFulfilled) {
		t.Errorf("health rule matchFields %s %v on %q: %s %s %q, want matched=%v", req.Operator, req.Values, req.Key, c.Status, c.Reason, c.Message, want)
		return
	}
	shown := text
	if req.Operator == v1alpha1.FieldSelectorOpDoesNotExist {
		shown = "<none>"
	}
	if want && c.Message != "field value: "+shown+", message: " {
		t.Errorf("health rule matchFields %s on %q: message %q, want field value %q", req.Operator, req.Key, c.Message, shown)
	}
}

func checkSelectorField(t *testing.T, req v1alpha1.FieldSelectorRequirement, want bool) {
	t.Helper()
	owner := selector.NewOwner(crossObject())
	bp, err := selector.MatchBlueprint(v1alpha1.OwnerSelector{SelectorMatchFields: []v1alpha1.FieldSelectorRequirement{req}}, owner)
	if err != nil || bp.Matched != want {
		t.Errorf("selectorMatchFields %s %v on %q: matched=%v, %v; want matched=%v", req.Operator, req.Values, req.Key, bp.Matched, err, want)
	}
	opt, err := selector.MatchOption(v1alpha1.Selector{MatchFields: []v1alpha1.FieldSelectorRequirement{req}}, owner)
	if err != nil || opt.Matched != want {
		t.Errorf("option matchFields %s %v on %q: matched=%v, %v; want matched=%v", req.Operator, req.Values, req.Key, opt.Matched, err, want)
	}
}

// checkMessagePath reads the path as the messagePath of a matcher that holds.
func checkMessagePath(t *testing.T, path, text string) {
	t.Helper()
	rule := &v1alpha1.HealthRule{MultiMatch: &v1alpha1.MultiMatchRule{
		Healthy: v1alpha1.MatchRule{MatchFields: []v1alpha1.HealthMatchFieldSelectorRequirement{{
			FieldSelectorRequirement: v1alpha1.FieldSelectorRequirement{Key: "kind", Operator: v1alpha1.FieldSelectorOpIn, Values: []string{"Workload"}},
			MessagePath:              path,
		}}},
		Unhealthy: v1alpha1.MatchRule{MatchConditions: []v1alpha1.ConditionRequirement{{Type: "NeverSet", Status: "True"}}},
	}}
	c := health.Evaluate(health.Input{Rule: rule, Object: &unstructured.Unstructured{Object: crossObject()}, HasOutputs: true, OutputsRead: true})
	if want := "field value: Workload, message: " + text; c.Status != metav1.ConditionTrue || c.Message != want {
		t.Errorf("messagePath %q: %s %s %q, want True with %q", path, c.Status, c.Reason, c.Message, want)
	}
}

// whole is what an output path or a whole-string tag yields for the values a path selects.
func whole(values []any) any {
	if len(values) == 1 {
		return values[0]
	}
	return values
}

func checkOutput(t *testing.T, path string, values []any) {
	t.Helper()
	obj := &unstructured.Unstructured{Object: crossObject()}
	got, err := stamp.ReadOutputs(obj, []v1alpha1.OutputPath{{Name: v1alpha1.OutputConfig, Path: path}})
	var oe *stamp.OutputError
	if len(values) == 0 || (len(values) == 1 && values[0] == nil) {
		if !errors.As(err, &oe) {
			t.Errorf("output path %q: %v, %v; want a missing value", path, got, err)
		}
		return
	}
	if err != nil {
		t.Errorf("output path %q: %v", path, err)
		return
	}
	if want := whole(values); !reflect.DeepEqual(got[v1alpha1.OutputConfig], want) {
		t.Errorf("output path %q = %#v, want %#v", path, got[v1alpha1.OutputConfig], want)
	}
}

func checkTag(t *testing.T, path string, values []any) {
	t.Helper()
	template, _ := json.Marshal(map[string]any{"data": map[string]any{
		"whole": "$(" + path + ")$",
		"text":  "v=$(" + path + ")$",
	}})
	ctx := stamp.NewContext([]string{stamp.OwnerWorkload}, crossObject(), nil, nil, stamp.Inputs{})
	got, err := stamp.Stamp(template, ctx)
	if len(values) == 0 {
		var se *stamp.Error
		if !errors.As(err, &se) {
			t.Errorf("tag $(%s)$: %v, %v; want a stamp error", path, got, err)
		}
		return
	}
	if err != nil {
		t.Errorf("tag $(%s)$: %v", path, err)
		return
	}
	data := got.Object["data"].(map[string]any)
	if want := whole(values); !reflect.DeepEqual(data["whole"], want) {
		t.Errorf("tag $(%s)$ = %#v, want %#v", path, data["whole"], want)
	}
	if want := "v=" + valueText(whole(values)); data["text"] != want {
		t.Errorf("tag v=$(%s)$ = %q, want %q", path, data["text"], want)
	}
}

// valueText spells out the expected string forms of the values in the table, independently of
// the code under test.
func valueText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case float64:
		switch x {
		case 1e21:
			return "1000000000000000000000"
		case 1e-7:
			return "0.0000001"
		}
	case []any:
		s := "["
		for i, e := range x {
			if i > 0 {
				s += ","
			}
			if str, ok := e.(string); ok {
				b, _ := json.Marshal(str)
				s += string(b)
			} else if e == nil {
				s += "null"
			} else {
				s += valueText(e)
			}
		}
		return s + "]"
	case map[string]any:
		if reflect.DeepEqual(x, crossObject()["spec"].(map[string]any)["limits"]) {
			return `{"cpu":"500m","memory":1024,"ratio":1000000000000000000000}`
		}
	}
	return fmt.Sprint(v)
}
