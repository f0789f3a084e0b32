package lint

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/render/selector"
)

// bpView is a ClusterSupplyChain or a ClusterDelivery as the checks read it.
type bpView struct {
	// term names the blueprint kind in messages: "supply chain" or "delivery".
	term      string
	selector  v1alpha1.OwnerSelector
	params    []v1alpha1.BlueprintParam
	resources []resourceView
}

// resourceView is one resource of a blueprint.
type resourceView struct {
	name     string
	kind     string
	template string
	options  []v1alpha1.TemplateOption
	params   []v1alpha1.BlueprintParam
	// inputs are the resource's sources, images, deployment and configs, in that order,
	// each with the outputs it reads and its field.
	inputs []inputView
}

type inputView struct {
	ref v1alpha1.ResourceReference
	// group is the field the input is listed in: sources, images, deployment or configs.
	group   string
	outputs []string
	field   string
}

func blueprintOf(obj v1alpha1.Object) *bpView {
	inputs := func(i int, sources, images []v1alpha1.ResourceReference, deployment *v1alpha1.DeploymentReference, configs []v1alpha1.ResourceReference) []inputView {
		var out []inputView
		add := func(refs []v1alpha1.ResourceReference, group string, outputs ...string) {
			for j, r := range refs {
				out = append(out, inputView{ref: r, group: group, outputs: outputs, field: fmt.Sprintf("spec.resources[%d].%s[%d].resource", i, group, j)})
			}
		}
		add(sources, "sources", v1alpha1.OutputURL, v1alpha1.OutputRevision)
		add(images, "images", v1alpha1.OutputImage)
		if deployment != nil {
			out = append(out, inputView{ref: v1alpha1.ResourceReference{Name: "deployment", Resource: deployment.Resource}, group: "deployment",
				outputs: []string{v1alpha1.OutputURL, v1alpha1.OutputRevision}, field: fmt.Sprintf("spec.resources[%d].deployment.resource", i)})
		}
		add(configs, "configs", v1alpha1.OutputConfig)
		return out
	}
	b, ok := obj.(v1alpha1.Blueprint)
	if !ok {
		return nil
	}
	bp := &bpView{term: v1alpha1.BlueprintKindOf(b).Owner().Terms.Blueprint, selector: b.GetOwnerSelector(), params: b.GetParams()}
	for i, r := range b.GetResources() {
		bp.resources = append(bp.resources, resourceView{name: r.Name, kind: r.TemplateRef.Kind, template: r.TemplateRef.Name,
			options: r.TemplateRef.Options, params: r.Params, inputs: inputs(i, r.Sources, r.Images, r.Deployment, r.Configs)})
	}
	return bp
}

// outputsOf are the outputs resources stamped from templates of kind offer later ones.
func outputsOf(kind string) []string {
	switch kind {
	case v1alpha1.KindClusterSourceTemplate, v1alpha1.KindClusterDeploymentTemplate:
		return []string{v1alpha1.OutputURL, v1alpha1.OutputRevision}
	case v1alpha1.KindClusterImageTemplate:
		return []string{v1alpha1.OutputImage}
	case v1alpha1.KindClusterConfigTemplate:
		return []string{v1alpha1.OutputConfig}
	}
	return nil
}

// blueprint checks a blueprint: its selector, its templates and options, its inputs (each
// an earlier resource with the outputs it reads), and the params its templates read.
func (l *linter) blueprint(e entry, bp *bpView) {
	sel := bp.selector
	if len(sel.Selector)+len(sel.SelectorMatchExpressions)+len(sel.SelectorMatchFields) == 0 {
		l.at(e, "spec", "the %s has no selector: an empty selector never selects an owner", bp.term)
	} else if _, err := selector.MatchBlueprint(sel, selector.Owner{}); err != nil {
		l.at(e, "spec."+errorField(err), "%v", err)
	}
	for i, r := range bp.resources {
		path := fmt.Sprintf("spec.resources[%d]", i)
		// A kind that is no template kind is the schema's to report.
		if r.template != "" && (outputsOf(r.kind) != nil || r.kind == v1alpha1.KindClusterTemplate) {
			l.templateRef(e, bp, r, path+".templateRef.name", r.template)
		}
		l.options(e, bp, r, path)
		for _, in := range r.inputs {
			producer := slices.IndexFunc(bp.resources, func(p resourceView) bool { return p.name == in.ref.Resource })
			if producer < 0 || producer >= i {
				l.at(e, in.field, "input [%s] of resource [%s] refers to resource [%s], which is not an earlier resource of the %s", in.ref.Name, r.name, in.ref.Resource, bp.term)
				continue
			}
			offered := outputsOf(bp.resources[producer].kind)
			for _, want := range in.outputs {
				if !slices.Contains(offered, want) {
					l.at(e, in.field, "input [%s] of resource [%s]: resource [%s] has no %s output", in.ref.Name, r.name, in.ref.Resource, want)
					break
				}
			}
		}
	}
}

// options checks a resource's template options: their selectors, that two options
// cannot tie for every owner, that their templates are given, and that a pass-through
// forwards one of the resource's inputs.
func (l *linter) options(e entry, bp *bpView, r resourceView, path string) {
	for j, o := range r.options {
		at := fmt.Sprintf("%s.templateRef.options[%d]", path, j)
		if _, err := selector.MatchOption(o.Selector, selector.Owner{}); err != nil {
			l.at(e, at+".selector."+errorField(err), "%v", err)
		}
		for k := range j {
			if equality.Semantic.DeepEqual(r.options[k].Selector, o.Selector) {
				l.at(e, at+".selector", "options %q and %q of resource [%s] have the same selector: no owner can choose between them", selector.OptionName(r.options[k]), selector.OptionName(o), r.name)
			}
		}
		if o.Name != "" {
			l.templateRef(e, bp, r, at+".name", o.Name)
		}
		if o.PassThrough != "" && !slices.ContainsFunc(r.inputs, func(in inputView) bool { return in.ref.Name == o.PassThrough && in.group != "deployment" }) {
			l.at(e, at+".passThrough", "resource [%s] passes through input [%s], which is not among its inputs", r.name, o.PassThrough)
		}
	}
}

// templateRef checks that a referenced template is among the documents, that every
// param it reads is declared by it, the blueprint or the resource, and that the resource
// has every input it reads.
func (l *linter) templateRef(e entry, bp *bpView, r resourceView, field, name string) {
	t, ok := l.templates[templateKey{r.kind, name}]
	if !ok {
		l.at(e, field, "template %s/%s is not among the files: did not find the template of the resource(s) [%s]", r.kind, name, r.name)
		return
	}
	for _, param := range slices.Sorted(maps.Keys(t.params)) {
		declared := slices.ContainsFunc(t.spec.Params, func(p v1alpha1.TemplateParam) bool { return p.Name == param }) ||
			slices.ContainsFunc(append(slices.Clone(bp.params), r.params...), func(p v1alpha1.BlueprintParam) bool { return p.Name == param })
		if !declared {
			use := t.params[param]
			l.at(e, field, "template %s/%s reads $(%s)$ (at %s), which neither it, the %s nor the resource declares: only an owner that gives it can be stamped",
				r.kind, name, use.tag, use.field, bp.term)
		}
	}
	for _, key := range slices.Sorted(maps.Keys(t.inputs)) {
		use := t.inputs[key]
		group, input, named := strings.Cut(key, ".")
		if !named {
			group = map[string]string{"source": "sources", "image": "images", "config": "configs"}[key]
			if key == "deployment" {
				group = key
			}
		}
		n := 0
		for _, in := range r.inputs {
			if in.group == group && (!named || in.ref.Name == input) {
				n++
			}
		}
		switch {
		case named && n == 0:
			l.at(e, field, "template %s/%s reads $(%s)$ (at %s), but resource [%s] has no %s input named [%s]", r.kind, name, use.tag, use.field, r.name, group, input)
		case !named && key == "deployment" && n == 0:
			l.at(e, field, "template %s/%s reads $(%s)$ (at %s), but resource [%s] has no deployment input", r.kind, name, use.tag, use.field, r.name)
		case !named && key != "deployment" && n != 1:
			l.at(e, field, "template %s/%s reads $(%s)$ (at %s), which needs exactly one %s input, and resource [%s] has %d", r.kind, name, use.tag, use.field, group, r.name, n)
		}
	}
}

// errorField is the field a selector error starts with, such as
// selectorMatchFields[0].key.
func errorField(err error) string {
	msg := err.Error()
	if i := strings.IndexAny(msg, " :"); i >= 0 {
		return msg[:i]
	}
	return msg
}
