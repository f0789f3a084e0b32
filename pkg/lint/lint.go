package lint

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/manifest"
)

// Problem is one mistake, at a line of a file.
type Problem struct {
	File string
	Line int
	// Object is the object at fault, Kind/name.
	Object string
	// Field is the path of the field at fault, such as
	// spec.healthyConditionRule.multiMatch.healthy.matchCEL[0].expression; empty for the
	// object as a whole.
	Field string
	// Message says what is wrong, quoting the user's text.
	Message string
	// Warning marks what may be intended but is likely a mistake: it does not fail lint.
	Warning bool
}

// String is "file:line: Kind/name: field: message", on one line (a CEL error's caret
// diagram, a ytt error's lines included); a warning says so before the field.
func (p Problem) String() string {
	s := p.File + ":" + strconv.Itoa(p.Line) + ": " + p.Object + ": "
	if p.Warning {
		s += "warning: "
	}
	if p.Field != "" {
		s += p.Field + ": "
	}
	return s + strings.Join(strings.Fields(p.Message), " ")
}

// entry is a document and what it decoded to.
type entry struct {
	doc manifest.Document
	obj v1alpha1.Object
}

// linter collects the problems of one set of documents.
type linter struct {
	ctx      context.Context
	problems []Problem
	// templates are the templates among the documents, by kind and name.
	templates map[templateKey]*templateInfo
}

type templateKey struct{ kind, name string }

// templateInfo is what blueprint checks need of a template.
type templateInfo struct {
	entry
	spec *v1alpha1.TemplateSpec
	// params are the params its $(params.<name>)$ tags read, by name, with the first tag.
	params map[string]tagUse
	// inputs are the inputs its tags read, by "sources.<name>" (images, configs), or by
	// "source", "image", "config" or "deployment", with the first tag.
	inputs map[string]tagUse
	// broken is set when the template has a problem of its own, which every owner using
	// it would only repeat.
	broken bool
	// warnedDocuments is set once a ytt template was warned of several output documents.
	warnedDocuments bool
}

// Lint checks the documents and returns every problem, sorted by file and line. Kinds
// other than Surveyor's are skipped. A document that cannot be decoded is a problem.
func Lint(ctx context.Context, docs []manifest.Document) []Problem {
	l := &linter{ctx: ctx, templates: map[templateKey]*templateInfo{}}
	var entries []entry
	for _, d := range docs {
		before := len(l.problems)
		l.schema(d)
		obj, err := d.Decode()
		if err != nil {
			if len(l.problems) == before {
				// The schema had nothing to say: the document is not even an object of its kind.
				msg := strings.TrimPrefix(err.Error(), fmt.Sprintf("%s:%d: ", d.File, d.Line()))
				l.problems = append(l.problems, Problem{File: d.File, Line: d.Line(), Object: objectName(d), Message: msg})
			}
			continue
		}
		if _, ok := obj.(*unstructured.Unstructured); !ok {
			entries = append(entries, entry{doc: d, obj: obj})
		}
	}
	for _, e := range entries {
		if spec, kind := templateSpec(e.obj); spec != nil {
			l.template(e, kind, spec)
		}
	}
	for _, e := range entries {
		if bp := blueprintOf(e.obj); bp != nil {
			l.blueprint(e, bp)
		}
	}
	objects := make([]v1alpha1.Object, 0, len(entries))
	for _, e := range entries {
		objects = append(objects, e.obj)
	}
	for _, e := range entries {
		if o, ok := e.obj.(v1alpha1.Owner); ok {
			l.owner(e, o, objects)
		}
	}
	slices.SortStableFunc(l.problems, func(a, b Problem) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line))
	})
	return slices.Compact(l.problems)
}

// at records a problem with the field at path of e's document (or the nearest field
// that exists).
func (l *linter) at(e entry, path, format string, args ...any) {
	l.atDoc(e.doc, path, format, args...)
}

func (l *linter) atDoc(d manifest.Document, path, format string, args ...any) {
	l.problems = append(l.problems, Problem{
		File: d.File, Line: manifest.Lookup(d.Node, path).YNode().Line,
		Object: objectName(d), Field: path, Message: fmt.Sprintf(format, args...),
	})
}

// reported says whether a problem was recorded at the field path of e's document, or
// anywhere in it when path is empty.
func (l *linter) reported(e entry, path string) bool {
	return slices.ContainsFunc(l.problems, func(p Problem) bool {
		return p.File == e.doc.File && p.Object == objectName(e.doc) && (path == "" || p.Field == path)
	})
}

// objectName is how problems name a document's object: Kind/name.
func objectName(d manifest.Document) string { return d.Node.GetKind() + "/" + d.Node.GetName() }

// schema checks a carto.run document against its CRD, as the API server would, as it is
// written (before any Go type rounds it).
func (l *linter) schema(d manifest.Document) {
	s, err := schemaFor(d.GroupVersionKind())
	if err != nil {
		l.atDoc(d, "", "reading the CRDs: %v", err)
		return
	}
	if s == nil {
		return
	}
	j, err := d.JSON()
	if err != nil {
		l.atDoc(d, "", "%v", err)
		return
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(j); err != nil {
		l.atDoc(d, "", "%v", err)
		return
	}
	errs, unknown := s.validate(l.ctx, u)
	for _, fe := range errs {
		l.atDoc(d, fe.Field, "%s", fe.ErrorBody())
	}
	for _, path := range unknown {
		l.atDoc(d, path, "unknown field: the API server drops it")
	}
}
