package lint_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"text/template"

	"github.com/surveyor-dev/surveyor/internal/golden"
	"github.com/surveyor-dev/surveyor/pkg/lint"
	"github.com/surveyor-dev/surveyor/pkg/manifest"
)

// corpusFuncs are the functions corpus cases use between <% and %> (tests/corpus).
var corpusFuncs = template.FuncMap{
	"repeat": func(n int, s string) string { return strings.Repeat(s, n) },
	"name":   func(n int, prefix string) string { return prefix + strings.Repeat("x", n-len(prefix)) },
	"quote":  func(s string) string { b, _ := json.Marshal(s); return string(b) },
}

// corpusObjects are the objects of a corpus case, as documents whose lines are the case
// file's.
func corpusObjects(t *testing.T, path string) []manifest.Document {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := template.New(path).Delims("<%", "%>").Funcs(corpusFuncs).Parse(string(raw))
	if err != nil {
		t.Fatal(err)
	}
	var expanded bytes.Buffer
	if err := tpl.Execute(&expanded, map[string]string{"Namespace": "surveyor-corpus"}); err != nil {
		t.Fatal(err)
	}
	rel, _ := filepath.Rel("../..", path)
	docs, err := manifest.Parse(rel, &expanded)
	if err != nil || len(docs) != 1 {
		t.Fatalf("%s: %v", path, err)
	}
	objects, err := docs[0].Node.Field("objects").Value.Elements()
	if err != nil {
		t.Fatal(err)
	}
	out := make([]manifest.Document, len(objects))
	for i, o := range objects {
		out[i] = manifest.Document{File: rel, Node: o}
	}
	return out
}

// lintable are the corpus cases whose mistake needs no cluster to be found. The others
// are mistakes only the API server's view of other kinds (a Service's ports, RBAC, a
// label's length on a stamped object), a live object or an evaluation can show, and
// legal edges.
var lintable = []string{
	"jsonpath-key-unparseable", "jsonpath-messagepath-unparseable", "jsonpath-output-unparseable", "jsonpath-stamp-tag-unparseable",
	"cel-health-not-compiling", "cel-health-not-boolean", "cel-health-expression-64kib", "cel-rule-expression-64kib",
	"cel-rule-not-compiling", "cel-rule-not-boolean", "cel-rule-message-not-string",
	"template-namespace", "template-namespace-tag", "template-no-kind", "template-no-name", "template-not-an-object",
	"input-missing-resource", "input-later-resource", "input-cycle", "input-wrong-output-kind",
	"duplicate-resource-name", "params-wrong-type-name", "params-undeclared", "param-value-and-default", "duplicate-template-param",
	"missing-template", "template-kind-mismatch", "workload-no-labels", "no-supply-chain", "supply-chains-tie", "empty-selector",
	"selector-field-invalid", "selector-expression-invalid", "options-none-match", "options-two-match", "option-selector-invalid",
	"pass-through-unknown-input", "names-253-template", "names-253-workload", "names-254-workload", "unicode-workload-label",
	"unicode-stamped-label",
	"health-both-rules", "health-two-forms", "multimatch-empty-side", "matchfields-in-without-values", "matchfields-bad-operator",
	"condition-rule-reserved", "templateref-bad-kind", "workload-ttl-negative", "workload-source-git-and-image",
	"resource-name-too-long", "supply-chain-no-resources",
}

var casePrefix = regexp.MustCompile(`^[0-9]+-`)

// TestCorpus lints every case of the bad-input corpus: each case whose mistake needs no
// cluster gets at least one problem, every other case none, and the problems are those of
// testdata/corpus.golden.
func TestCorpus(t *testing.T) {
	files, err := filepath.Glob("../../tests/corpus/cases/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	slices.Sort(files)
	var out strings.Builder
	for _, f := range files {
		id := casePrefix.ReplaceAllString(strings.TrimSuffix(filepath.Base(f), ".yaml"), "")
		problems := lint.Lint(context.Background(), corpusObjects(t, f))
		if want := slices.Contains(lintable, id); want != (len(problems) > 0) {
			t.Errorf("%s: %d problems, want problems: %v\n%s", id, len(problems), want, lines(problems))
		}
		out.WriteString("## " + id + "\n" + lines(problems))
	}
	golden.Check(t, "testdata/corpus.golden", out.String())
}

func lines(problems []lint.Problem) string {
	var b strings.Builder
	for _, p := range problems {
		b.WriteString(cut(p.String()) + "\n")
	}
	return b.String()
}

// cut keeps golden lines readable when a case quotes a 64 KiB expression.
func cut(s string) string {
	if len(s) > 400 {
		return s[:400] + "…"
	}
	return s
}
