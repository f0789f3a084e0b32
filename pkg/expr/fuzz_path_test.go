package expr

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/client-go/util/jsonpath"
)

// FuzzPath parses and evaluates arbitrary paths over a fixed object. normalize must be
// idempotent and must not turn a key at the root into recursive descent; ParsePath and
// Find must never panic; a parse error must be a *SyntaxError quoting the path and an
// evaluation error must wrap ErrNotFound; Find must not modify the object; and wherever a
// path has a plan, the plan must give client-go's answer (the same values, or an error
// exactly when client-go errs) or give up.
//
// Seeds live in testdata/fuzz/FuzzPath; run with
//
//	go test -run XXX -fuzz '^FuzzPath$' -fuzztime 10s ./pkg/expr
func FuzzPath(f *testing.F) {
	for _, seed := range []string{
		"metadata.name", ".metadata.name", "{.metadata.name}", "{metadata.name}", "$.metadata.name", "  spec.replicas ",
		"metadata.labels['app.kubernetes.io/name']", `metadata.labels["app.kubernetes.io/name"]`,
		`metadata.labels.app\.kubernetes\.io/name`, "spec.env[?(@.name=='B')].value", `spec.env[?(@.name!="B")].name`,
		"spec.env[*].name", "spec.env[-1].name", "spec.env[0:1]", "spec['a','b']", "spec.[", "", "{.}", "{.spec",
		"{range .spec.env[*]}{.name}{end}", "spec.replicas}{.spec.ratio", "$", "{{}}", "$..name", "..name",
		"spec..name", "spec['a b']", `spec[""]`, "spec.nested[*][*]", "spec.nothing[*]", "[0]", "spec.env[?(@.value)].name",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, path string) {
		once := normalize(path)
		if twice := normalize(once); twice != once {
			t.Fatalf("normalize is not idempotent: %q -> %q -> %q", path, once, twice)
		}
		// Only a path that asks for recursive descent may get it: ['a'] at the root is the
		// key a, as $['a'] is in every jsonpath dialect, not ..a.
		if strings.HasPrefix(once, "{..") && !asksDescent(path) {
			t.Fatalf("normalize(%q) = %q turns a root key into recursive descent", path, once)
		}

		p, err := ParsePath(path)
		if err != nil {
			var syntax *SyntaxError
			if !errors.As(err, &syntax) || syntax.Path != path {
				t.Fatalf("ParsePath(%q) error = %#v, want a *SyntaxError quoting the path", path, err)
			}
			return
		}
		obj := fuzzObject()
		got, err := p.Find(obj)
		if err != nil && !errors.Is(err, ErrNotFound) {
			t.Fatalf("Find(%q) error = %v, want ErrNotFound", path, err)
		}
		if err == nil && len(got) == 0 {
			t.Fatalf("Find(%q) found nothing without an error", path)
		}
		if !reflect.DeepEqual(obj, fuzzObject()) {
			t.Fatalf("Find(%q) modified the object", path)
		}
		for _, v := range got {
			_ = ValueString(v)
		}
		if p.plan != nil {
			comparePlan(t, p, fuzzObject())
		}
	})
}

// comparePlan runs p's plan and client-go's evaluator on data and fails when the plan answers
// differently.
func comparePlan(t *testing.T, p *Path, data any) {
	t.Helper()
	got, err, ok := p.plan.find(data)
	if !ok {
		return
	}
	ref := jsonpath.New("ref")
	if perr := ref.Parse(p.template); perr != nil {
		t.Fatalf("%q has a plan but client-go cannot parse %q: %v", p.text, p.template, perr)
	}
	results, refErr := ref.FindResults(data)
	want := values(results)
	if len(got) == 0 {
		got = nil
	}
	if (err != nil) != (refErr != nil) || (err != nil && err.Error() != refErr.Error()) {
		t.Fatalf("%q: plan error %v, client-go error %v", p.text, err, refErr)
	}
	if diff := cmp.Diff(want, got, mapOrderFree(p)); err == nil && diff != "" {
		t.Fatalf("%q: values differ (-client-go +plan):\n%s", p.text, diff)
	}
}

func fuzzObject() map[string]any {
	return map[string]any{
		"metadata": map[string]any{
			"name":   "petclinic",
			"labels": map[string]any{"app.kubernetes.io/name": "petclinic", "a b": "space", "": "empty", "ü": "unicode"},
		},
		"spec": map[string]any{
			"replicas": int64(3),
			"ratio":    1.5,
			"paused":   false,
			"nothing":  nil,
			"env": []any{
				map[string]any{"name": "A", "value": "1"},
				map[string]any{"name": "B", "value": "2"},
				map[string]any{"name": "C", "value": nil},
				nil,
			},
			"empty":  []any{},
			"nested": []any{[]any{int64(1), int64(2)}, map[string]any{"x": []any{"y"}}, []any{}},
		},
	}
}

// asksDescent reports whether a path asks for recursive descent: what is left after white
// space, an opening brace and a "$" starts with "..".
func asksDescent(path string) bool {
	p := strings.TrimSpace(path)
	if strings.HasPrefix(p, "{") {
		p = strings.TrimSpace(p[1:])
	}
	return strings.HasPrefix(strings.TrimPrefix(p, "$"), "..")
}

// mapOrderFree compares values as a multiset for a plan with a wildcard or recursive descent, which
// visits an object's keys in sorted order where client-go follows Go's random map order.
func mapOrderFree(p *Path) cmp.Option {
	for _, s := range p.plan {
		if s.kind == stepWildcard || s.kind == stepRecursive {
			return cmpopts.SortSlices(func(a, b any) bool { return fmt.Sprintf("%#v", a) < fmt.Sprintf("%#v", b) })
		}
	}
	return cmp.Options{}
}
