package expr_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/surveyor-dev/surveyor/pkg/expr"
)

func TestPathFind(t *testing.T) {
	obj := object(t, appYAML).Object
	obj["metadata"].(map[string]any)["labels"] = map[string]any{"app.kubernetes.io/name": "deployer", "a b": "space"}
	tests := []struct {
		path    string
		want    []any
		wantErr string
	}{
		{"status.phase", []any{"Running"}, ""},
		{".status.phase", []any{"Running"}, ""},
		{"{.status.phase}", []any{"Running"}, ""},
		{"{status.phase}", []any{"Running"}, ""},
		{" status.phase ", []any{"Running"}, ""},
		{"$.status.phase", []any{"Running"}, ""},
		{"$['status']['phase']", []any{"Running"}, ""},
		{"status.replicas", []any{int64(3)}, ""},
		{"status.ratio", []any{2.5}, ""},
		{"status.paused", []any{false}, ""},
		{"status.gone", []any{nil}, ""},
		{"status.loadBalancer", []any{map[string]any{}}, ""},
		{"status.tags", []any{[]any{"blue", "green"}}, ""},
		{"status.tags[*]", []any{"blue", "green"}, ""},
		{"status.tags[-1]", []any{"green"}, ""},
		{"status.conditions[-1].type", []any{"Stalled"}, ""},
		{"metadata.labels['app.kubernetes.io/name']", []any{"deployer"}, ""},
		{`metadata.labels["app.kubernetes.io/name"]`, []any{"deployer"}, ""},
		{`metadata.labels.app\.kubernetes\.io/name`, []any{"deployer"}, ""},
		{"metadata.labels['a b']", []any{"space"}, ""},
		{`status.conditions[?(@.type=="ReconcileFailed")].message`, []any{"not failed"}, ""},
		{`status.conditions[?(@.type=='ReconcileFailed')].message`, []any{"not failed"}, ""},
		{`status.conditions[?(@.status!="True")].type`, []any{"ReconcileFailed", "Stalled"}, ""},
		{"..usefulErrorMessage", []any{"kapp deploy failed"}, ""},
		{`.status.conditions[?(@.type=="Nope")].message`, nil, "no value matches the path"},
		{"status.missing", nil, "missing is not found"},
		{"status.gone.deeper", nil, "deeper is not found"},
		{"status.tags[7]", nil, "array index out of bounds: index 7, length 2"},
		{"status.phase[0]", nil, "string is not array or slice"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			p, err := expr.ParsePath(tt.path)
			if err != nil {
				t.Fatal(err)
			}
			if p.String() != tt.path {
				t.Errorf("String() = %q", p.String())
			}
			got, err := p.Find(obj)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr || !errors.Is(err, expr.ErrNotFound) {
					t.Fatalf("error %v, want %q wrapping ErrNotFound", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("values (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGet(t *testing.T) {
	obj := object(t, appYAML).Object
	for path, want := range map[string]any{
		"status.phase":   "Running",
		"status.gone":    nil,
		"status.tags[*]": []any{"blue", "green"},
	} {
		got, err := expr.Get(path, obj)
		if err != nil || !cmp.Equal(got, want) {
			t.Errorf("Get(%q) = %#v, %v; want %#v", path, got, err, want)
		}
	}
	if _, err := expr.Get("status.nope", obj); !errors.Is(err, expr.ErrNotFound) {
		t.Errorf("Get of a missing key: %v, want ErrNotFound", err)
	}
	var syntax *expr.SyntaxError
	if _, err := expr.Get("status.[", obj); !errors.As(err, &syntax) || syntax.Path != "status.[" {
		t.Errorf("Get of a bad path: %v, want a *SyntaxError quoting it", err)
	}
}

func TestParsePathErrors(t *testing.T) {
	tests := []struct{ path, wantErr string }{
		{"", `invalid jsonpath "": empty path`},
		{"$", `invalid jsonpath "$": empty path`},
		{"{.}", `invalid jsonpath "{.}": empty path`},
		{"status.conditions[?(@.type==", `invalid jsonpath "status.conditions[?(@.type==": unterminated filter`},
		{".status.conditions[?(@.type==\"Ready\").message", `invalid jsonpath ".status.conditions[?(@.type==\"Ready\").message": unclosed array expect ]`},
		{"status.x[", `invalid jsonpath "status.x[": unterminated array`},
		{"{.status", `invalid jsonpath "{.status": unclosed action`},
		{"status.x]", `invalid jsonpath "status.x]": unrecognized character in action: U+005D ']'`},
		{"{.status.phase}{.status.ready}", `invalid jsonpath "{.status.phase}{.status.ready}": must be a single jsonpath expression`},
		{"status.phase}{.status.ready", `invalid jsonpath "status.phase}{.status.ready": must be a single jsonpath expression`},
		{"{range .status.tags[*]}{@}{end}", `invalid jsonpath "{range .status.tags[*]}{@}{end}": must be a single jsonpath expression`},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			before := expr.PathParseCount()
			for range 2 {
				_, err := expr.ParsePath(tt.path)
				var syntax *expr.SyntaxError
				if err == nil || err.Error() != tt.wantErr || !errors.As(err, &syntax) || syntax.Path != tt.path {
					t.Fatalf("error %v, want a *SyntaxError %q", err, tt.wantErr)
				}
			}
			if n := expr.PathParseCount() - before; n != 2 {
				t.Errorf("parsed %d times; an invalid path is not cached, want 2", n)
			}
		})
	}
}

func TestPathCacheAndConcurrency(t *testing.T) {
	obj := object(t, appYAML).Object
	// The first path has a plan; the second runs on client-go's stateful evaluator, which the
	// Path keeps a free list of.
	texts := []string{`status.conditions[?(@.type=="ReconcileSucceeded")].status`, "..type"}
	for _, text := range texts {
		p1, err := expr.ParsePath(text)
		if err != nil {
			t.Fatal(err)
		}
		if p2, _ := expr.ParsePath(text); p1 != p2 {
			t.Errorf("%s: parsed into two Paths", text)
		}
		want, err := p1.Find(obj)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for range 50 {
					got, err := p1.Find(obj)
					if err != nil || !cmp.Equal(want, got) {
						t.Errorf("%s: concurrent Find gave %v, %v; want %v", text, got, err, want)
						return
					}
				}
			})
		}
		wg.Wait()
	}
	before := expr.PathParseCount()
	p, _ := expr.ParsePath(texts[1])
	for range 10 {
		_, _ = p.Find(obj)
	}
	if n := expr.PathParseCount() - before; n != 0 {
		t.Errorf("steady state parsed %d times, want 0", n)
	}
}

// Many goroutines evaluating the same cached paths must not share evaluation state; run with -race.
func TestConcurrentGet(t *testing.T) {
	paths := []string{"status.tags[-1]", "status.conditions[*].type", "..message"}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 64 {
		wg.Go(func() {
			obj := object(t, appYAML).Object
			for j := range 50 {
				p := paths[(i+j)%len(paths)]
				if _, err := expr.Get(p, obj); err != nil {
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
