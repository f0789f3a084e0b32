package health_test

import (
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/surveyor-dev/surveyor/pkg/health"
)

func TestParsePath(t *testing.T) {
	obj := object(t, appYAML).Object
	tests := []struct {
		path    string
		want    []any
		wantErr string
	}{
		{"status.phase", []any{"Running"}, ""},
		{".status.phase", []any{"Running"}, ""},
		{"{.status.phase}", []any{"Running"}, ""},
		{" status.phase ", []any{"Running"}, ""},
		{"$.status.phase", []any{"Running"}, ""},
		{`status.conditions[?(@.type=="ReconcileFailed")].message`, []any{"not failed"}, ""},
		{`.status.conditions[?(@.type=="Nope")].message`, nil, ""},
		{"status.replicas", []any{int64(3)}, ""},
		{"status.gone", nil, ""},
		{"status.tags[*]", []any{"blue", "green"}, ""},
		{"status.conditions[-1].type", []any{"Stalled"}, ""},
		{"{.status.phase}{.status.ready}", []any{"Running", true}, ""},
		{"{range .status.tags[*]}{@}{end}", []any{"blue", "green"}, ""},
		{"status.missing", nil, `cannot read jsonpath "status.missing": missing is not found`},
		{"status.tags[7]", nil, `cannot read jsonpath "status.tags[7]": array index out of bounds: index 7, length 2`},
		{"status.phase[0]", nil, `cannot read jsonpath "status.phase[0]": string is not array or slice`},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			p, err := health.ParsePath(tt.path)
			if err != nil {
				t.Fatal(err)
			}
			if p.String() != tt.path {
				t.Errorf("String() = %q", p.String())
			}
			got, err := p.Find(obj)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
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

func TestParsePathErrors(t *testing.T) {
	tests := []struct{ path, wantErr string }{
		{"", `invalid jsonpath "": empty path`},
		{"status.conditions[?(@.type==", `invalid jsonpath "status.conditions[?(@.type==": unterminated filter`},
		{"{.status", `invalid jsonpath "{.status": unclosed action`},
		{"status.x]", `invalid jsonpath "status.x]": unrecognized character in action: U+005D ']'`},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			before := health.PathParseCount()
			for range 2 {
				if _, err := health.ParsePath(tt.path); err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
			}
			if n := health.PathParseCount() - before; n != 2 {
				t.Errorf("parsed %d times; an invalid path is not cached, want 2", n)
			}
		})
	}
}

func TestPathCacheAndConcurrency(t *testing.T) {
	obj := object(t, appYAML).Object
	// The first path has a plan; the others run on client-go's stateful evaluator, which the Path
	// pools per goroutine, or parses afresh for {range}.
	texts := []string{
		`{.status.conditions[?(@.type=="ReconcileSucceeded")].status}{.metadata.name}{.kind}`,
		"{..type}",
		"{range .status.conditions[*]}{.type}{end}",
	}
	for _, text := range texts {
		p1, err := health.ParsePath(text)
		if err != nil {
			t.Fatal(err)
		}
		if p2, _ := health.ParsePath(text); p1 != p2 {
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
	before := health.PathParseCount()
	p, _ := health.ParsePath(texts[1])
	for range 10 {
		_, _ = p.Find(obj)
	}
	if n := health.PathParseCount() - before; n != 0 {
		t.Errorf("steady state parsed %d times, want 0", n)
	}
}

func TestValueString(t *testing.T) {
	tests := []struct {
		value any
		want  string
	}{
		{"text", "text"}, {int64(3), "3"}, {3, "3"}, {int32(-4), "-4"}, {2.5, "2.5"}, {3.0, "3"}, {1e21, "1000000000000000000000"},
		{true, "true"}, {false, "false"}, {nil, ""}, {map[string]any{}, "{}"}, {[]any{"a", int64(1)}, `["a",1]`},
		{map[string]any{"b": int64(1), "a": "x"}, `{"a":"x","b":1}`},
	}
	for _, tt := range tests {
		if got := health.ValueString(tt.value); got != tt.want {
			t.Errorf("ValueString(%#v) = %q, want %q", tt.value, got, tt.want)
		}
	}
}
