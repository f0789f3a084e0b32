package fieldpath_test

import (
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/surveyor-dev/surveyor/pkg/realizer/stamp/fieldpath"
)

func testObject() map[string]any {
	return map[string]any{
		"metadata": map[string]any{
			"name":   "petclinic",
			"labels": map[string]any{"app.kubernetes.io/name": "petclinic", "tier": "web"},
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
			"empty": []any{},
		},
	}
}

func TestGet(t *testing.T) {
	tests := []struct {
		name     string
		path     string
		want     any
		notFound bool
		syntax   bool
	}{
		{name: "bare path", path: "metadata.name", want: "petclinic"},
		{name: "leading dot", path: ".metadata.name", want: "petclinic"},
		{name: "braces", path: "{.metadata.name}", want: "petclinic"},
		{name: "braces without dot", path: "{metadata.name}", want: "petclinic"},
		{name: "dollar root", path: "$.metadata.name", want: "petclinic"},
		{name: "surrounding space", path: "  spec.replicas ", want: int64(3)},
		{name: "int stays int64", path: "spec.replicas", want: int64(3)},
		{name: "float", path: "spec.ratio", want: 1.5},
		{name: "bool", path: "spec.paused", want: false},
		{name: "null is found", path: "spec.nothing", want: nil},
		{name: "map", path: "metadata.labels", want: map[string]any{"app.kubernetes.io/name": "petclinic", "tier": "web"}},
		{name: "index", path: "spec.env[1].value", want: "2"},
		{name: "negative index", path: "spec.env[-1].name", want: "B"},
		{name: "quoted key with dots", path: "metadata.labels['app.kubernetes.io/name']", want: "petclinic"},
		{name: "double-quoted key", path: `metadata.labels["app.kubernetes.io/name"]`, want: "petclinic"},
		{name: "escaped dots", path: `metadata.labels.app\.kubernetes\.io/name`, want: "petclinic"},
		{name: "filter", path: "spec.env[?(@.name=='B')].value", want: "2"},
		{name: "wildcard gives a list", path: "spec.env[*].name", want: []any{"A", "B"}},
		{name: "missing key", path: "spec.image", notFound: true},
		{name: "missing below null", path: "spec.nothing.deeper", notFound: true},
		{name: "index out of range", path: "spec.empty[0].value", notFound: true},
		{name: "filter matches nothing", path: "spec.env[?(@.name=='Z')].value", notFound: true},
		{name: "unterminated bracket", path: "spec.[", syntax: true},
		{name: "empty", path: "", syntax: true},
		{name: "two expressions", path: "spec.replicas}{.spec.ratio", syntax: true},
		{name: "range", path: "{range .spec.env[*]}{.name}{end}", syntax: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := fieldpath.Get(tt.path, testObject())
			var syntaxErr *fieldpath.SyntaxError
			switch {
			case tt.syntax:
				if !errors.As(err, &syntaxErr) {
					t.Fatalf("Get(%q) error = %v, want a *SyntaxError", tt.path, err)
				}
				if syntaxErr.Path != tt.path {
					t.Errorf("SyntaxError.Path = %q, want %q", syntaxErr.Path, tt.path)
				}
			case tt.notFound:
				if !errors.Is(err, fieldpath.ErrNotFound) {
					t.Fatalf("Get(%q) error = %v, want ErrNotFound", tt.path, err)
				}
			default:
				if err != nil {
					t.Fatalf("Get(%q) error = %v", tt.path, err)
				}
				if !reflect.DeepEqual(got, tt.want) {
					t.Errorf("Get(%q) = %#v, want %#v", tt.path, got, tt.want)
				}
			}
		})
	}
}

func TestGetKeepsClientGoWording(t *testing.T) {
	_, err := fieldpath.Get("spec.image", testObject())
	if err == nil || err.Error() != "image is not found" {
		t.Fatalf("error = %v, want %q", err, "image is not found")
	}
}

func TestCompileCaches(t *testing.T) {
	a, err := fieldpath.Compile("spec.replicas")
	if err != nil {
		t.Fatal(err)
	}
	b, err := fieldpath.Compile("spec.replicas")
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Error("Compile returned two parses of the same text")
	}
	if a.String() != "spec.replicas" {
		t.Errorf("String() = %q", a.String())
	}
}

// Many goroutines evaluating the same cached paths must not share evaluation state; run with -race.
func TestConcurrentGet(t *testing.T) {
	paths := []string{"spec.env[-1].name", "spec.env[*].value", "metadata.labels['app.kubernetes.io/name']"}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 64 {
		wg.Go(func() {
			obj := testObject()
			for j := range 50 {
				p := paths[(i+j)%len(paths)]
				if _, err := fieldpath.Get(p, obj); err != nil {
					errs <- fmt.Errorf("%s: %w", p, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestNormalize(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{name: "bare", in: "spec.x", want: "{.spec.x}"},
		{name: "dotted", in: ".spec.x", want: "{.spec.x}"},
		{name: "braced", in: "{.spec.x}", want: "{.spec.x}"},
		{name: "quoted key", in: "metadata.labels['a.b/c']", want: `{.metadata.labels.a\.b/c}`},
		{name: "filter untouched", in: "spec.env[?(@.name=='x')].value", want: "{.spec.env[?(@.name=='x')].value}"},
		{name: "union untouched", in: "spec['a','b']", want: "{.spec['a','b']}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := fieldpath.Normalize(tt.in); got != tt.want {
				t.Errorf("Normalize(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestText(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want string
	}{
		{name: "string", in: "web", want: "web"},
		{name: "int64", in: int64(3), want: "3"},
		{name: "integral float", in: 3.0, want: "3"},
		{name: "float", in: 1.5, want: "1.5"},
		{name: "bool", in: true, want: "true"},
		{name: "null", in: nil, want: ""},
		{name: "map", in: map[string]any{"b": int64(1), "a": "x"}, want: `{"a":"x","b":1}`},
		{name: "list", in: []any{"a", int64(1)}, want: `["a",1]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := fieldpath.Text(tt.in); got != tt.want {
				t.Errorf("Text(%#v) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
