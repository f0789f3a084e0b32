package ytt_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/surveyor-dev/surveyor/hack/tools"
	"github.com/surveyor-dev/surveyor/pkg/render/ytt"
)

// values are data values as Cartographer passes them for a Workload with a param.
func values() map[string]any {
	owner := map[string]any{"apiVersion": "carto.run/v1alpha1", "kind": "Workload",
		"metadata": map[string]any{"name": "app", "namespace": "dev", "labels": map[string]any{"app": "web"}},
		"spec":     map[string]any{"params": []any{map[string]any{"name": "port", "value": "8080"}}}}
	return map[string]any{
		"workload": owner, "deliverable": owner,
		"params":  map[string]any{"replicas": int64(2), "port": "8080", "ratio": 0.5, "debug": true},
		"sources": map[string]any{}, "images": map[string]any{"built": map[string]any{"image": "img:1", "name": "built"}},
		"configs": map[string]any{}, "deployment": nil, "image": "img:1",
		"labels": map[string]any{"carto.run/workload-name": "app"},
	}
}

// cases are templates with what ytt prints for them, on stdout or (as an *ytt.Error) stderr.
var cases = []struct {
	name, template string
	want, wantErr  string
}{
	{
		name: "data values keep their types",
		template: `#@ load("@ytt:data", "data")
#@ p = data.values.params
kind: ConfigMap
metadata:
  name: #@ data.values.workload.metadata.name
  labels: #@ data.values.labels
data:
  types: #@ ",".join([type(p.replicas), type(p.port), type(p.ratio), type(p.debug), type(data.values.deployment)])
  image: #@ data.values.image
  deliverable: #@ data.values.deliverable.metadata.name
`,
		want: `kind: ConfigMap
metadata:
  name: app
  labels:
    carto.run/workload-name: app
data:
  types: int,string,float,bool,NoneType
  image: img:1
  deliverable: app
`,
	},
	{
		name:     "several documents, empty ones dropped",
		template: "a: 1\n---\n---\nb: 2\n",
		want:     "a: 1\n---\nb: 2\n",
	},
	{
		name:     "empty",
		template: "",
		want:     "",
	},
	{
		name: "a missing key",
		template: `#@ load("@ytt:data", "data")
kind: ConfigMap
data:
  q: #@ data.values.params["waciuma-com/quality"]
`,
		wantErr: "ytt: Error: \n- key \"waciuma-com/quality\" not in struct\n    in <toplevel>\n      stdin.yml:4 |   q: #@ data.values.params[\"waciuma-com/quality\"]\n",
	},
	{
		name:     "a syntax error",
		template: "#@ x = \na: 1\n",
		wantErr:  "stdin.yml:2",
	},
	{
		name:     "a plain comment",
		template: "a: 1 # a comment\n",
		want:     "a: 1\n",
	},
	// What Template does in place of ytt's workspace, for its one file.
	{
		name: "an overlay document applies to the others",
		template: `#@ load("@ytt:overlay", "overlay")
kind: ConfigMap
data: {a: "1"}
---
#@overlay/match by=overlay.all
---
data:
  #@overlay/match missing_ok=True
  b: "2"
`,
		want: "kind: ConfigMap\ndata:\n  a: \"1\"\n  b: \"2\"\n",
	},
	{
		name:     "an overlay that matches nothing",
		template: "#@ load(\"@ytt:overlay\", \"overlay\")\nkind: A\n---\n#@overlay/match by=overlay.subset({\"kind\": \"B\"})\n---\nkind: C\n",
		wantErr:  "Expected number of matched nodes to be 1, but was 0",
	},
	{
		name:     "data.list and data.read see the one file",
		template: "#@ load(\"@ytt:data\", \"data\")\nfiles: #@ data.list()\nsize: #@ len(data.read(\"stdin.yml\"))\n",
		want:     "files:\n- stdin.yml\nsize: 88\n",
	},
	{
		name:     "data.read of another file",
		template: "#@ load(\"@ytt:data\", \"data\")\na: #@ data.read(\"other.yml\")\n",
		wantErr:  "Expected to find file 'other.yml' (hint: only files included via -f flag are available)",
	},
	{
		name:     "loading another file",
		template: "#@ load(\"helpers.star\", \"f\")\na: 1\n",
		wantErr:  "Expected to find file 'helpers.star'",
	},
	{
		name:     "loading itself",
		template: "#@ load(\"stdin.yml\", \"f\")\na: 1\n",
		wantErr:  "to be a library file, but was not",
	},
	{
		name:     "a private library",
		template: "#@ load(\"@ytt:library\", \"library\")\na: #@ library.get(\"lib\")\n",
		wantErr:  "Could not find private library",
	},
	{
		name:     "a library path",
		template: "#@ load(\"@lib:x.star\", \"f\")\na: 1\n",
		wantErr:  "Could not find private library",
	},
	{
		name:     "an unknown ytt module",
		template: "#@ load(\"@ytt:nope\", \"x\")\na: 1\n",
		wantErr:  "builtin ytt library does not have module 'nope'",
	},
	{
		name:     "a value ytt cannot convert, its Go backtrace left out",
		template: "#@ load(\"@ytt:data\", \"data\")\nfiles: #@ data\n",
		wantErr:  "ytt: Error: \n- (p) unknown type *starlarkstruct.Module for conversion to go value\n    in <toplevel>\n      stdin.yml:2 | files: #@ data\n",
	},
	{
		name:     "a runtime error names the generated code as the binary does",
		template: "#@ 0%\n",
		wantErr:  "__ytt_tpl2_start_node",
	},
}

func TestEval(t *testing.T) {
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			out, err := ytt.Eval(tt.template, values())
			checkResult(t, string(out), err, tt.want, tt.wantErr)
		})
	}
}

func checkResult(t *testing.T, out string, err error, want, wantErr string) {
	t.Helper()
	if wantErr != "" {
		var yerr *ytt.Error
		if !errors.As(err, &yerr) || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("error = %v, want an *ytt.Error containing %q", err, wantErr)
		}
		return
	}
	if err != nil {
		t.Fatalf("error = %v", err)
	}
	if out != want {
		t.Errorf("output =\n%s\nwant\n%s", out, want)
	}
}

// Eval prints what the ytt binary prints, output and errors alike (less a Go backtrace, and
// with generated names numbered as in a fresh process), given the data values as
// Cartographer gives them: --data-value-yaml key=<JSON>.
func TestEvalMatchesTheBinary(t *testing.T) {
	bin, err := tools.Path("ytt", io.Discard)
	if err != nil {
		t.Fatalf("building the ytt binary: %v", err)
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			args := []string{"-f", "-"}
			flags, err := ytt.DataValues(values())
			if err != nil {
				t.Fatal(err)
			}
			for _, kv := range flags {
				args = append(args, "--data-value-yaml", kv)
			}
			cmd := exec.Command(bin, args...)
			cmd.Stdin = strings.NewReader(tt.template)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			runErr := cmd.Run()
			out, err := ytt.Eval(tt.template, values())
			if runErr != nil {
				// Less what would change from one run to the next (ytt.Deterministic).
				if err == nil || err.Error() != ytt.Deterministic(stderr.String()) {
					t.Errorf("Eval error = %q, the binary printed %q", err, stderr.String())
				}
				return
			}
			if err != nil || string(out) != stdout.String() {
				t.Errorf("Eval = %q, %v; the binary printed %q", out, err, stdout.String())
			}
		})
	}
}

func TestInProcessTimeout(t *testing.T) {
	start := time.Now()
	_, err := ytt.InProcess{Timeout: 100 * time.Millisecond}.Eval("#@ for i in range(1000000000):\n#@ end\na: 1\n", nil)
	if err == nil || err.Error() != "ytt: evaluation exceeded the time limit of 100ms" {
		t.Fatalf("error = %v, want the time limit", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("returned after %s", d)
	}
}

// Evaluations of one compiled template at once each get their own output.
func TestTemplateConcurrently(t *testing.T) {
	tpl := ytt.Compile("#@ load(\"@ytt:data\", \"data\")\n#@ def f(n):\n#@   return [n] * 200\n#@ end\nv: #@ data.values.n\nl: #@ f(data.values.n)\n")
	var wg sync.WaitGroup
	for n := range 8 {
		wg.Go(func() {
			for range 20 {
				out, err := tpl.Eval(map[string]any{"n": n})
				if err != nil || !strings.HasPrefix(string(out), fmt.Sprintf("v: %d\nl:\n- %d\n", n, n)) {
					t.Errorf("Eval(n=%d) = %.40q, %v", n, out, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// A data values document has no place in a template: the context is the data values.
func TestDataValuesDocumentRejected(t *testing.T) {
	_, err := ytt.Eval("#@data/values\n---\na: 1\n", values())
	want := "ytt: Error: stdin.yml:2: a template may not hold a @data/values document: its data values are the templating context\n"
	if err == nil || err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
}

// Values with a character YAML does not allow are rejected as the binary rejects them.
func TestValuesYAMLDoesNotAllow(t *testing.T) {
	flags := []string{"params={\"a\":\"\u007f\"}"}
	_, err := ytt.EvalFlags("a: 1\n", flags)
	_, want := referenceEval("a: 1\n", flags)
	if err == nil || want == nil || err.Error() != want.Error() {
		t.Errorf("error = %v, want %v", err, want)
	}
}
