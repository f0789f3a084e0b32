package selector_test

import (
	"testing"

	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/render/selector"
)

// FuzzSelectorMatchFields evaluates one matchFields requirement, with an arbitrary key,
// operator and value, against an arbitrary owner object, through both the option
// selector and the blueprint selector. Neither may panic; they must agree; Exists and
// DoesNotExist must be complementary; In and NotIn with the same values must never both
// hold; a matched selector must score all its requirements; and Select must not choose
// a blueprint whose selector failed to evaluate.
//
// Seeds live in testdata/fuzz/FuzzSelectorMatchFields; run with
//
//	go test -run XXX -fuzz '^FuzzSelectorMatchFields$' -fuzztime 10s ./pkg/render/selector
func FuzzSelectorMatchFields(f *testing.F) {
	wl := `{"apiVersion":"carto.run/v1alpha1","kind":"Workload","metadata":{"name":"app","labels":{"type":"web"}},` +
		`"spec":{"source":{"git":{"url":"https://example.com"}},"image":null,"params":[{"name":"replicas","value":2}],"env":[]}}`
	f.Add("spec.source.git", "Exists", "", wl)
	f.Add("spec.image", "DoesNotExist", "", wl)
	f.Add("spec.params[0].value", "In", "2", wl)
	f.Add("spec.params[?(@.name=='replicas')].value", "NotIn", "3", wl)
	f.Add("spec.params[*].name", "In", "replicas", wl)
	f.Add("spec.[", "Exists", "", wl)
	f.Add("metadata.labels['type']", "Equals", "web", wl)
	f.Add("{range .spec.env[*]}{.name}{end}", "In", "", `[]`)
	f.Add("$", "NotIn", "x\x00y", `{"a":1e400}`)

	f.Fuzz(func(t *testing.T, key, operator, value, objectJSON string) {
		var obj map[string]any
		if err := utiljson.Unmarshal([]byte(objectJSON), &obj); err != nil || obj == nil {
			obj = map[string]any{"metadata": map[string]any{"labels": map[string]any{"type": "web"}}}
		}
		var values []string
		if value != "" {
			values = []string{value}
		}
		req := func(op v1alpha1.FieldSelectorOperator) v1alpha1.FieldSelectorRequirement {
			return v1alpha1.FieldSelectorRequirement{Key: key, Operator: op, Values: values}
		}
		owner := selector.NewOwner(obj)

		fuzzed := req(v1alpha1.FieldSelectorOperator(operator))
		opt, optErr := selector.MatchOption(v1alpha1.Selector{MatchFields: []v1alpha1.FieldSelectorRequirement{fuzzed}}, owner)
		bp, bpErr := selector.MatchBlueprint(v1alpha1.OwnerSelector{SelectorMatchFields: []v1alpha1.FieldSelectorRequirement{fuzzed}}, owner)
		if (optErr == nil) != (bpErr == nil) || opt != bp {
			t.Fatalf("option and blueprint selectors disagree: %+v, %v vs %+v, %v", opt, optErr, bp, bpErr)
		}
		if optErr == nil && opt.Matched && opt.Score != 1 {
			t.Fatalf("matched with score %d, want 1", opt.Score)
		}

		match := func(op v1alpha1.FieldSelectorOperator) (bool, bool) {
			m, err := selector.MatchOption(v1alpha1.Selector{MatchFields: []v1alpha1.FieldSelectorRequirement{req(op)}}, owner)
			return m.Matched, err == nil
		}
		exists, ok1 := match(v1alpha1.FieldSelectorOpExists)
		missing, ok2 := match(v1alpha1.FieldSelectorOpDoesNotExist)
		if ok1 && ok2 && exists == missing {
			t.Fatalf("key %q: Exists = %v and DoesNotExist = %v", key, exists, missing)
		}
		in, ok3 := match(v1alpha1.FieldSelectorOpIn)
		notIn, ok4 := match(v1alpha1.FieldSelectorOpNotIn)
		if ok3 && ok4 && in && notIn {
			t.Fatalf("key %q values %q: both In and NotIn match", key, values)
		}
		if ok1 && in && !exists {
			t.Fatalf("key %q: In matches but Exists does not", key)
		}

		sel := selector.Select(v1alpha1.Workloads.Terms, owner, []selector.Candidate{
			{Name: "fuzzed", Selector: v1alpha1.OwnerSelector{SelectorMatchFields: []v1alpha1.FieldSelectorRequirement{fuzzed}}},
		})
		if bpErr != nil && sel.Name != "" {
			t.Fatalf("Select chose %q although its selector failed: %v", sel.Name, bpErr)
		}
		if sel.Reason == "" {
			t.Fatal("Select returned no reason")
		}
	})
}
