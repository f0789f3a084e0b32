package ytt_test

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/surveyor-dev/surveyor/internal/yttworker"
	"github.com/surveyor-dev/surveyor/pkg/render"
	"github.com/surveyor-dev/surveyor/pkg/render/ytt"
)

// TestMain makes this test binary a ytt worker when FuzzYTT's pool starts it as one.
func TestMain(m *testing.M) {
	yttworker.RunIfWorker()
	os.Exit(m.Run())
}

var (
	fuzzPoolOnce sync.Once
	fuzzPool     *yttworker.Pool
)

// FuzzYTT feeds arbitrary templates and params to ytt the way the controller does: through
// its worker pool, whose limits stop any runaway the fuzzer writes (a short time limit
// keeps loops cheap). Every input gives what ytt's own pipeline gives (the output, or the
// error's text), never a dead pool; the output reads back as documents or fails to with an
// error in words; and what a worker outputs, Eval outputs in process too.
func FuzzYTT(f *testing.F) {
	for _, tt := range cases {
		f.Add(tt.template, `{"replicas": 2, "port": "8080"}`)
	}
	f.Add("#@ def f(x):\n#@   return {\"a\": x}\n#@ end\nkind: #@ f(1)\n", `{}`)
	f.Add("#@ for i in range(3):\n- #@ i\n#@ end\n", `{"n": null}`)
	f.Add("#@ load(\"@ytt:json\", \"json\")\nkind: #@ json.encode([1, 2])\n", `{"a": [1]}`)
	f.Fuzz(func(t *testing.T, source, params string) {
		var p any
		if json.Unmarshal([]byte(params), &p) != nil {
			t.Skip()
		}
		fuzzPoolOnce.Do(func() {
			var err error
			if fuzzPool, err = yttworker.New(yttworker.Options{Timeout: 500 * time.Millisecond}); err != nil {
				panic(err)
			}
		})
		values := map[string]any{"params": p, "workload": map[string]any{"metadata": map[string]any{"name": "app"}}}
		out, err := fuzzPool.Eval(source, values)
		var yerr *ytt.Error
		switch {
		case err != nil && !errors.As(err, &yerr):
			t.Fatalf("Eval(%q) = %v, want output or an *ytt.Error", source, err)
		case err != nil && (yerr.Limit || strings.Contains(yerr.Text, "may not hold a @data/values")):
			return // a limit, or what Surveyor rejects and ytt takes as data values
		}
		flags, _ := ytt.DataValues(values)
		ref, referr := referenceEval(source, flags)
		switch {
		case err != nil && (referr == nil || referr.Error() != err.Error()):
			t.Fatalf("Eval(%q) = %v, ytt's own pipeline %q, %v", source, err, ref, referr)
		case err != nil:
			return
		case referr != nil || string(ref) != string(out):
			t.Fatalf("Eval(%q) printed %q, ytt's own pipeline %q, %v", source, out, ref, referr)
		}
		if _, err := render.Documents(out); err != nil && strings.Contains(err.Error(), "%!") {
			t.Fatalf("Eval(%q) printed %q, which reads back with an error not in words: %v", source, out, err)
		}
		if local, err := ytt.Eval(source, values); err != nil || string(local) != string(out) {
			t.Fatalf("Eval(%q): the worker printed %q, in process %q (%v)", source, out, local, err)
		}
	})
}
