package lint

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/expr"
	"github.com/surveyor-dev/surveyor/pkg/health"
	"github.com/surveyor-dev/surveyor/pkg/manifest"
	"github.com/surveyor-dev/surveyor/pkg/render/stamp"
	"github.com/surveyor-dev/surveyor/pkg/workitems"
)

// templateSpec is the shared spec of a template object and its kind, or nil.
func templateSpec(obj v1alpha1.Object) (*v1alpha1.TemplateSpec, string) {
	switch o := obj.(type) {
	case *v1alpha1.ClusterSourceTemplate:
		return &o.Spec.TemplateSpec, v1alpha1.KindClusterSourceTemplate
	case *v1alpha1.ClusterImageTemplate:
		return &o.Spec.TemplateSpec, v1alpha1.KindClusterImageTemplate
	case *v1alpha1.ClusterConfigTemplate:
		return &o.Spec.TemplateSpec, v1alpha1.KindClusterConfigTemplate
	case *v1alpha1.ClusterDeploymentTemplate:
		return &o.Spec.TemplateSpec, v1alpha1.KindClusterDeploymentTemplate
	case *v1alpha1.ClusterTemplate:
		return &o.Spec, v1alpha1.KindClusterTemplate
	}
	return nil, ""
}

// outputFields are the spec fields holding each output's jsonpath.
var outputFields = map[string]string{
	v1alpha1.OutputURL: "urlPath", v1alpha1.OutputRevision: "revisionPath", v1alpha1.OutputImage: "imagePath", v1alpha1.OutputConfig: "configPath",
}

// contextKeys are the roots a $(...)$ tag can read (DESIGN §3.3, §8).
var contextKeys = []string{
	stamp.OwnerWorkload, stamp.OwnerDeliverable, "params", "sources", "images", "configs", "deployment", "source", "image", "config", "labels",
}

// template checks a template: its health rule and condition rules (as its own status
// would report them), the jsonpaths of its outputs and deployment checks, and the
// object it stamps: every $(...)$ tag parses and reads something a context has, and the
// object has what the controller needs to apply it.
func (l *linter) template(e entry, kind string, spec *v1alpha1.TemplateSpec) {
	info := &templateInfo{entry: e, spec: spec, params: map[string]tagUse{}, inputs: map[string]tagUse{}}
	l.templates[templateKey{kind, e.obj.GetName()}] = info
	defer func() { info.broken = l.reported(e, "") }()

	for _, err := range []error{health.Validate(health.RuleOf(spec)), workitems.Validate(spec.ConditionRules)} {
		var invalid *health.InvalidRuleError
		if errors.As(err, &invalid) {
			for _, f := range invalid.Fields {
				// The schema's own rule may have said it already, in its words.
				if !l.reported(e, "spec."+f.Path) {
					l.at(e, "spec."+f.Path, "%v", f.Err)
				}
			}
		}
	}
	for _, out := range e.obj.(v1alpha1.Template).GetOutputPaths() {
		l.path(e, "spec."+outputFields[out.Name], out.Path)
	}
	if d, ok := e.obj.(*v1alpha1.ClusterDeploymentTemplate); ok {
		for i, m := range d.Spec.ObservedMatches {
			l.path(e, fmt.Sprintf("spec.observedMatches[%d].input", i), m.Input)
			l.path(e, fmt.Sprintf("spec.observedMatches[%d].output", i), m.Output)
		}
		if c := d.Spec.ObservedCompletion; c != nil {
			l.path(e, "spec.observedCompletion.succeeded.key", c.Succeeded.Key)
			if c.Failed != nil {
				l.path(e, "spec.observedCompletion.failed.key", c.Failed.Key)
			}
		}
	}
	if spec.Ytt != "" {
		l.yttTemplate(e, info, spec)
		return
	}
	l.templateObject(e, info, spec)
}

// path checks that the jsonpath at field parses.
func (l *linter) path(e entry, field, path string) {
	if path == "" {
		return
	}
	if _, err := expr.ParsePath(path); err != nil {
		l.at(e, field, "%v", err)
	}
}

// inputFields are the fields of each kind of input a tag may read, by context key.
var inputFields = map[string][]string{
	"sources": {v1alpha1.OutputURL, v1alpha1.OutputRevision, "name"}, "images": {v1alpha1.OutputImage, "name"}, "configs": {v1alpha1.OutputConfig, "name"},
	"source": {v1alpha1.OutputURL, v1alpha1.OutputRevision, "name"}, "deployment": {v1alpha1.OutputURL, v1alpha1.OutputRevision, "name"},
}

// tagUse is a tag that reads a param or an input, and where the template has it.
type tagUse struct {
	tag   string
	field string
}

// segments are the plain steps a tag's path starts with: workload.spec.image and
// params['port'] give [workload spec image] and [params port]. A step that is no plain
// name or quoted key (an index, a filter, a wildcard) ends them.
func segments(tag string) []string {
	rest := strings.TrimSuffix(strings.TrimLeft(tag, "{.$"), "}")
	var out []string
	for rest != "" {
		switch {
		case strings.HasPrefix(rest, "."):
			rest = rest[1:]
		case strings.HasPrefix(rest, "['") || strings.HasPrefix(rest, `["`):
			end := strings.Index(rest[2:], rest[1:2]+"]")
			if end < 0 {
				return out
			}
			out = append(out, rest[2:2+end])
			rest = rest[2+end+2:]
		case strings.HasPrefix(rest, "["):
			return out
		default:
			end := strings.IndexAny(rest, ".[")
			if end < 0 {
				end = len(rest)
			}
			out = append(out, rest[:end])
			rest = rest[end:]
		}
	}
	return out
}

// templateObject checks the object a template stamps.
func (l *linter) templateObject(e entry, info *templateInfo, spec *v1alpha1.TemplateSpec) {
	tpl := manifest.Get(e.doc.Node, "spec.template")
	if tpl == nil || tpl.YNode().Kind != yaml.MappingNode {
		return // the schema check reports a missing or malformed template
	}
	value := func(path string) string {
		if n := manifest.Get(tpl, path); n != nil {
			return yaml.GetValue(n)
		}
		return ""
	}
	for _, f := range []string{"apiVersion", "kind"} {
		if value(f) == "" {
			l.at(e, "spec.template", "the object has no %s: the stamped object needs apiVersion, kind and metadata.name", f)
		}
	}
	name, generateName := value("metadata.name"), value("metadata.generateName")
	switch {
	case spec.IsImmutable() && (name != "" || generateName == ""):
		l.at(e, "spec.template.metadata", "a template with lifecycle %s must set metadata.generateName, not metadata.name", spec.Lifecycle)
	case !spec.IsImmutable() && name == "":
		l.at(e, "spec.template.metadata", "the object has no metadata.name: the stamped object needs apiVersion, kind and metadata.name")
	}
	walk(tpl, "spec.template", func(field, value string) {
		for _, tag := range stamp.Tags(value) {
			if _, err := expr.ParsePath(tag); err != nil {
				l.at(e, field, "tag $(%s)$: %v", tag, err)
				continue
			}
			l.tag(e, info, field, tag)
		}
	})
}

// tag checks what a $(...)$ tag reads, and records the params and inputs it needs.
func (l *linter) tag(e entry, info *templateInfo, field, tag string) {
	segs := segments(tag)
	if len(segs) == 0 {
		return
	}
	root := segs[0]
	if !slices.Contains(contextKeys, root) {
		l.at(e, field, "tag $(%s)$ reads %q, which no template's context has: it has %s", tag, root, strings.Join(contextKeys, ", "))
		return
	}
	use := tagUse{tag: tag, field: field}
	inputField := 2 // the step naming an input's field: sources.<name>.<field>
	switch root {
	case "params":
		if len(segs) > 1 {
			if _, seen := info.params[segs[1]]; !seen {
				info.params[segs[1]] = use
			}
		}
		return
	case "sources", "images", "configs":
		if len(segs) > 1 {
			key := root + "." + segs[1]
			if _, seen := info.inputs[key]; !seen {
				info.inputs[key] = use
			}
		}
	case "source", "image", "config", "deployment":
		if _, seen := info.inputs[root]; !seen {
			info.inputs[root] = use
		}
		inputField = 1
	}
	if fields := inputFields[root]; fields != nil && len(segs) > inputField && !slices.Contains(fields, segs[inputField]) {
		l.at(e, field, "tag $(%s)$ reads [%s], which %s inputs do not have: they have %s", tag, segs[inputField], root, strings.Join(fields, ", "))
	}
}

// walk calls visit with the field path and value of every string scalar under n, whose
// path is at.
func walk(n *yaml.RNode, at string, visit func(field, value string)) {
	switch n.YNode().Kind {
	case yaml.MappingNode:
		_ = n.VisitFields(func(f *yaml.MapNode) error {
			walk(f.Value, at+fieldSegment(f.Key.YNode().Value), visit)
			return nil
		})
	case yaml.SequenceNode:
		elements, _ := n.Elements()
		for i, el := range elements {
			walk(el, fmt.Sprintf("%s[%d]", at, i), visit)
		}
	case yaml.ScalarNode:
		if n.YNode().Tag == yaml.NodeTagString || n.YNode().Tag == "" {
			visit(at, n.YNode().Value)
		}
	}
}

// fieldSegment is a map key as a field path step: .key, or [key] when it has dots.
func fieldSegment(key string) string {
	if strings.ContainsAny(key, ".[]") {
		return "[" + key + "]"
	}
	return "." + key
}
