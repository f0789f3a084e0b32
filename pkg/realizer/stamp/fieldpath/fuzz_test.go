package fieldpath_test

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/surveyor-dev/surveyor/pkg/realizer/stamp/fieldpath"
)

// FuzzFieldpath compiles and evaluates arbitrary paths. Normalize must be idempotent
// (Compile normalizes, so a normalized path must mean what the original meant), Compile
// and Get must never panic, an error must be either a *SyntaxError or ErrNotFound, and
// the original and normalized spellings must read the same value.
//
// Seeds live in testdata/fuzz/FuzzFieldpath; run with
//
//	go test -run XXX -fuzz '^FuzzFieldpath$' -fuzztime 10s ./pkg/realizer/stamp/fieldpath
func FuzzFieldpath(f *testing.F) {
	for _, seed := range []string{
		"metadata.name", ".metadata.name", "{.metadata.name}", "$.metadata.name", "  spec.replicas ",
		"metadata.labels['app.kubernetes.io/name']", `metadata.labels["app.kubernetes.io/name"]`,
		`metadata.labels.app\.kubernetes\.io/name`, "spec.env[?(@.name=='B')].value", "spec.env[*].name",
		"spec.env[-1].name", "spec.env[0:1]", "spec['a','b']", "spec.[", "", "{.}", "{range .spec.env[*]}{.name}{end}",
		"spec.replicas}{.spec.ratio", "$", "{{}}", "$..name", "..name", "spec..name", "spec['a b']", `spec[""]`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, path string) {
		once := fieldpath.Normalize(path)
		if twice := fieldpath.Normalize(once); twice != once {
			t.Fatalf("Normalize is not idempotent: %q -> %q -> %q", path, once, twice)
		}
		// Only a path that asks for recursive descent may get it: ['a'] at the root
		// is the key a, as $['a'] is in every jsonpath dialect, not ..a.
		if !strings.HasPrefix(rootless(path), "..") && strings.HasPrefix(once, "{..") {
			t.Fatalf("Normalize(%q) = %q turns a root key into recursive descent", path, once)
		}

		p, err := fieldpath.Compile(path)
		np, nerr := fieldpath.Compile(once)
		if (err == nil) != (nerr == nil) {
			t.Fatalf("Compile(%q) err = %v but Compile(Normalize) = Compile(%q) err = %v", path, err, once, nerr)
		}
		if err != nil {
			var syntax *fieldpath.SyntaxError
			if !errors.As(err, &syntax) || syntax.Path != path {
				t.Fatalf("Compile(%q) error = %#v, want a *SyntaxError quoting the path", path, err)
			}
			return
		}
		if p.String() != path {
			t.Fatalf("String() = %q, want %q", p.String(), path)
		}
		obj := fuzzObject()
		got, gerr := p.Get(obj)
		ngot, ngerr := np.Get(fuzzObject())
		if gerr != nil && !errors.Is(gerr, fieldpath.ErrNotFound) {
			t.Fatalf("Get(%q) error = %v, want ErrNotFound", path, gerr)
		}
		// Recursive descent walks maps in Go's random order, so lists compare as multisets.
		if (gerr == nil) != (ngerr == nil) || !sameValues(got, ngot) {
			t.Fatalf("Get(%q) = %#v, %v but Get(%q) = %#v, %v", path, got, gerr, once, ngot, ngerr)
		}
		if !reflect.DeepEqual(obj, fuzzObject()) {
			t.Fatalf("Get(%q) modified the object", path)
		}
		_ = fieldpath.Text(got)
	})
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
			},
			"empty":  []any{},
			"nested": []any{[]any{int64(1), int64(2)}, map[string]any{"x": []any{"y"}}},
		},
	}
}

// rootless strips what Normalize strips before it drops a leading ".": space, one
// pair of braces and a "$". A path asks for recursive descent when what is left
// starts with "..".
func rootless(path string) string {
	p := strings.TrimSpace(path)
	if strings.HasPrefix(p, "{") && strings.HasSuffix(p, "}") {
		p = strings.TrimSpace(p[1 : len(p)-1])
	}
	return strings.TrimPrefix(p, "$")
}

// sameValues compares two Get results, lists as multisets.
func sameValues(a, b any) bool {
	la, okA := a.([]any)
	lb, okB := b.([]any)
	if !okA || !okB {
		return reflect.DeepEqual(a, b)
	}
	key := func(l []any) []string {
		out := make([]string, len(l))
		for i, v := range l {
			out[i] = fmt.Sprintf("%#v", v)
		}
		slices.Sort(out)
		return out
	}
	return slices.Equal(key(la), key(lb))
}
