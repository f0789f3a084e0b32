package lint

import (
	"regexp"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/manifest"
	"github.com/surveyor-dev/surveyor/pkg/render"
	"github.com/surveyor-dev/surveyor/pkg/render/stamp"
	"github.com/surveyor-dev/surveyor/pkg/render/ytt"
)

// yttEvaluator is how lint evaluates ytt templates: in process, within ytt.Timeout.
var yttEvaluator render.YTT = ytt.InProcess{}

// yttTemplate checks a template written in ytt. It is evaluated with every data value
// present (a bare owner of the template's kinds, the template's param defaults, no
// inputs): an error ytt finds before running it (YAML, starlark syntax, an undefined
// name) is the template's, reported at its line in the file. An error while running it
// depends on the data values, and is reported for the owners among the files that meet
// it (owner). Output of several documents is a warning: only the first is stamped.
func (l *linter) yttTemplate(e entry, info *templateInfo, spec *v1alpha1.TemplateSpec) {
	params := map[string]any{}
	resolved, _ := stamp.ResolveParams(spec.Params, nil, nil, nil)
	for _, p := range resolved {
		params[p.Name] = p.Value
	}
	bare := map[string]any{"apiVersion": v1alpha1.GroupVersion.String(), "kind": "Workload",
		"metadata": map[string]any{"name": "lint", "namespace": "default"}, "spec": map[string]any{}}
	values := stamp.NewContext([]string{stamp.OwnerWorkload, stamp.OwnerDeliverable}, bare, params, map[string]string{}, stamp.Inputs{})
	out, err := yttEvaluator.Eval(spec.Ytt, values)
	if err != nil {
		if !yttRuntimeError(err.Error()) {
			l.yttProblem(e, err.Error())
		}
		return
	}
	if docs, err := render.Documents(out); err == nil && len(docs) > 1 {
		l.yttDocuments(e, info, len(docs), "")
	}
}

// yttRuntimeError says whether ytt's error arose while running the template: its text then
// has the frames of a traceback ("in <toplevel>").
func yttRuntimeError(text string) bool {
	return strings.Contains(text, "\n    in ")
}

// yttDocuments warns, once per template, that its output has several documents.
func (l *linter) yttDocuments(e entry, info *templateInfo, n int, owner string) {
	if info.warnedDocuments {
		return
	}
	info.warnedDocuments = true
	msg := "the ytt template's output has " + strconv.Itoa(n) + " documents"
	if owner != "" {
		msg += " for " + owner
	}
	l.problems = append(l.problems, Problem{
		File: e.doc.File, Line: yttLine(e.doc, 1), Object: objectName(e.doc), Field: "spec.ytt",
		Message: msg + ": only the first is stamped, the others are dropped", Warning: true,
	})
}

// yttProblem reports a ytt error at the line of the file it points at (ytt's own line
// in stdin.yml), or at spec.ytt.
func (l *linter) yttProblem(e entry, text string) {
	l.problems = append(l.problems, Problem{
		File: e.doc.File, Line: yttLine(e.doc, yttErrorLine(text)), Object: objectName(e.doc), Field: "spec.ytt",
		Message: text,
	})
}

var (
	yttStdinLine = regexp.MustCompile(regexp.QuoteMeta(ytt.FileName) + `:(\d+)`)
	yttYAMLLine  = regexp.MustCompile(`yaml: line (\d+)`)
)

// yttErrorLine is the line of the template a ytt error points at, 1 when it names none.
func yttErrorLine(text string) int {
	for _, re := range []*regexp.Regexp{yttStdinLine, yttYAMLLine} {
		if m := re.FindStringSubmatch(text); m != nil {
			if n, err := strconv.Atoi(m[1]); err == nil && n > 0 {
				return n
			}
		}
	}
	return 1
}

// yttLine is the line of the file holding line n of a document's spec.ytt: a block
// scalar (ytt: |) starts on the line after its key; a plain or quoted one on the key's.
func yttLine(d manifest.Document, n int) int {
	node := manifest.Get(d.Node, "spec.ytt")
	if node == nil {
		return manifest.Lookup(d.Node, "spec").YNode().Line
	}
	y := node.YNode()
	if y.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		return y.Line + n
	}
	return y.Line + n - 1
}

// yttPrefix starts the part of a stamp failure that is ytt's.
const yttPrefix = "unable to apply ytt template: "

// yttOwnerProblem reports what became of an owner's resource stamped from a ytt template
// at the template's line: ytt's error for that owner, or output of several documents. It
// says whether it reported the resource's failure.
func (l *linter) yttOwnerProblem(owner entry, res render.RenderedResource) bool {
	if res.Template == nil {
		return false
	}
	info := l.templates[templateKey{res.Template.Kind, res.Template.Name}]
	if info == nil || info.spec.Ytt == "" {
		return false
	}
	if info.broken {
		return true // its own problem says it
	}
	who := objectName(owner.doc)
	if res.Documents > 1 {
		l.yttDocuments(info.entry, info, res.Documents, who)
	}
	_, text, found := strings.Cut(res.Submitted.Message, yttPrefix)
	if res.Object != nil || !found {
		return false
	}
	e := info.entry
	l.problems = append(l.problems, Problem{
		File: e.doc.File, Line: yttLine(e.doc, yttErrorLine(text)), Object: objectName(e.doc), Field: "spec.ytt",
		Message: "stamping resource [" + res.Name + "] for " + who + ": " + text,
	})
	return true
}
