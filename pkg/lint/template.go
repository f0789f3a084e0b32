package lint

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/expr"
	"github.com/surveyor-dev/surveyor/pkg/health"
	"github.com/surveyor-dev/surveyor/pkg/manifest"
	"github.com/surveyor-dev/surveyor/pkg/realizer/stamp"
	"github.com/surveyor-dev/surveyor/pkg/workitems"
)

// templateSpec is the shared spec of a template object and its kind, or nil.
func templateSpec(obj client.Object) (*v1alpha1.TemplateSpec, string) {
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
	stamp.OutputURL: "urlPath", stamp.OutputRevision: "revisionPath", stamp.OutputImage: "imagePath", stamp.OutputConfig: "configPath",
}

// contextKeys are the roots a $(...)$ tag can read (DESIGN §3.3, §8).
var contextKeys = []string{
	stamp.OwnerWorkload, stamp.OwnerDeliverable, "params", "sources", "images", "configs", "deployment", "source", "image", "config",
}

// template checks a template: its health rule and condition rules (as its own status
// would report them), the jsonpaths of its outputs and deployment checks, and the
// object it stamps: every $(...)$ tag parses and reads something a context has, and the
// object has what the controller needs to apply it.
func (l *linter) template(e entry, kind string, spec *v1alpha1.TemplateSpec) {
	info := &templateInfo{entry: e, spec: spec, params: map[string]string{}}
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
	for _, out := range stamp.OutputPaths(e.obj) {
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

// paramTag is a tag reading a param: params.name or params['name'].
var paramTag = regexp.MustCompile(`^\.?params(?:\.([A-Za-z0-9_-]+)|\[['"]([^'"]+)['"]\])`)

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
			root := strings.TrimLeft(tag, "{.$")
			if i := strings.IndexAny(root, ".["); i >= 0 {
				root = root[:i]
			}
			if !slices.Contains(contextKeys, root) {
				l.at(e, field, "tag $(%s)$ reads %q, which no template's context has: it has %s", tag, root, strings.Join(contextKeys, ", "))
				continue
			}
			if m := paramTag.FindStringSubmatch(tag); m != nil {
				param := m[1] + m[2]
				if _, seen := info.params[param]; !seen {
					info.params[param] = field
				}
			}
		}
	})
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
