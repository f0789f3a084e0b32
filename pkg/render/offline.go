package render

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/expr"
	"github.com/surveyor-dev/surveyor/pkg/health"
	"github.com/surveyor-dev/surveyor/pkg/render/selector"
	"github.com/surveyor-dev/surveyor/pkg/render/stamp"
	"github.com/surveyor-dev/surveyor/pkg/render/ytt"
)

// Input is what Render reads in place of a cluster.
type Input struct {
	// Owner is the Workload or Deliverable to render. Without a uid (a file never applied)
	// its stamped objects' owner reference, and so their digest, lack one.
	Owner v1alpha1.Owner
	// Objects are the blueprints and templates to choose from; other kinds are ignored.
	Objects []v1alpha1.Object
	// Observed are live objects, e.g. saved with `kubectl get -o yaml`: a resource whose
	// stamped object is among them has its outputs read from it, as the controller would.
	Observed []*unstructured.Unstructured
	// Outputs are output values given by hand, by resource and then output name (url,
	// revision, image, config). They win over observed and stamped values.
	Outputs map[string]map[string]any
	// YTT evaluates the templates written in ytt; nil means in this process, within
	// ytt.Timeout (ytt.InProcess).
	YTT YTT
}

// Rendering is what Render made of an owner.
type Rendering struct {
	// Blueprint is the selected blueprint, nil when none was.
	Blueprint *v1alpha1.BlueprintReference
	// Selection is the owner's SupplyChainReady (DeliveryReady) as the controller would
	// report it; only when it is True were resources rendered.
	Selection metav1.Condition
	// Requirements are the selected blueprint's selector requirements the owner satisfies.
	Requirements int
	// ServiceAccount is the identity, namespace/name, the objects would be applied as.
	ServiceAccount string
	// Resources are the blueprint's resources, in order.
	Resources []RenderedResource
}

// Where a rendered resource's outputs came from.
const (
	// OutputsGiven are outputs given by hand (Input.Outputs), at least in part.
	OutputsGiven = "given"
	// OutputsObserved are outputs read from an observed live object.
	OutputsObserved = "observed"
	// OutputsStamped are outputs read from the stamped object itself: fields it sets.
	OutputsStamped = "stamped"
	// OutputsPassedThrough are an input forwarded by a pass-through option.
	OutputsPassedThrough = "passed through"
)

// RenderedResource is one resource of the selected blueprint.
type RenderedResource struct {
	// Name is the resource's name in the blueprint.
	Name string
	// Template is the template it is stamped from; nil until one was chosen.
	Template *v1alpha1.TemplateReference
	// Option is the option chosen among the templateRef's options, nil without options.
	Option *v1alpha1.TemplateOption
	// OptionRequirements are the chosen option's selector requirements the owner satisfies.
	OptionRequirements int
	// Params are the params the template saw, with their origins.
	Params []stamp.Param
	// Inputs name the resources whose outputs it consumes.
	Inputs []string
	// Object is the stamped object, nil when it could not be stamped (see Submitted).
	Object *unstructured.Unstructured
	// Documents is how many documents a ytt template's output had (Result.Documents).
	Documents int
	// Outputs are the values later resources read from it, nil when they are not known.
	Outputs map[string]any
	// OutputsFrom says where Outputs came from: OutputsGiven, OutputsObserved or
	// OutputsStamped.
	OutputsFrom string
	// Submitted is the resource's ResourceSubmitted as the controller would report it,
	// when the resource could not be stamped (Object is nil) or its outputs are not known.
	// Its status is True otherwise.
	Submitted metav1.Condition
}

// Render is the offline pipeline behind `kubectl carto render` (DESIGN §10): it selects an
// owner's blueprint among the given objects, resolves options and params, and stamps every
// resource it can, through the same Pass the controller uses, so each object is exactly
// what the controller would apply. It reads no cluster: a blueprint counts as Ready when
// every template it references is among the objects, and an output is known only when it
// was given, can be read from an observed object, or is a field the stamped object itself
// sets. What cannot be stamped is said, in the words the controller would put in the
// owner's status, never guessed.
//
// An error is returned only for an owner that cannot be read at all.
func Render(in Input) (*Rendering, error) {
	owner, err := NewOwner(in.Owner)
	if err != nil {
		return nil, fmt.Errorf("cannot render: %w", err)
	}
	if in.YTT == nil {
		in.YTT = ytt.InProcess{}
	}
	var templates []v1alpha1.Template
	var blueprints []*Blueprint
	for _, o := range in.Objects {
		if t, ok := o.(v1alpha1.Template); ok {
			templates = append(templates, t)
		}
	}
	get := Among(templates)
	for _, o := range in.Objects {
		if v1alpha1.BlueprintKindOf(o) != owner.Kind.Blueprint {
			continue
		}
		bp := BlueprintOf(o.(v1alpha1.Blueprint))
		_, missing, _ := TemplatesOf(bp, func(ref TemplateRef) (v1alpha1.Template, error) { return get(ref.Kind, ref.Name) })
		// A blueprint's status as its reconciler would write it, from the templates given.
		bp.Status = &v1alpha1.BlueprintStatus{ObservedGeneration: bp.Generation, Conditions: BlueprintConditions(missing, bp.Generation)}
		blueprints = append(blueprints, bp)
	}

	bp, cond := SelectBlueprint(owner, blueprints)
	out := &Rendering{Selection: WithGeneration(cond, in.Owner.GetGeneration())}
	if bp == nil {
		return out, nil
	}
	out.Blueprint = &v1alpha1.BlueprintReference{Kind: bp.Kind.Kind, Name: bp.Name}
	if m, err := selector.MatchBlueprint(bp.Selector, selector.NewOwner(owner.Fields)); err == nil {
		out.Requirements = m.Score
	}
	if cond.Status != metav1.ConditionTrue {
		return out, nil
	}
	ns, name := ServiceAccount(in.Owner, bp)
	out.ServiceAccount = ns + "/" + name

	r := renderer{in: in, pass: &Pass{Owner: owner, Blueprint: bp, Template: get, YTT: in.YTT, Done: map[string]*Result{}}}
	for i := range bp.Resources {
		out.Resources = append(out.Resources, r.resource(&bp.Resources[i]))
	}
	return out, nil
}

// Among reads templates from the given ones alone, the last of a kind and name winning; any
// other is not found. It serves a Pass without a cluster.
func Among(templates []v1alpha1.Template) func(kind, name string) (v1alpha1.Template, error) {
	byRef := make(map[TemplateRef]v1alpha1.Template, len(templates))
	for _, t := range templates {
		byRef[TemplateRef{v1alpha1.TemplateKindOf(t).Kind, t.GetName()}] = t
	}
	return func(kind, name string) (v1alpha1.Template, error) {
		if tpl, ok := byRef[TemplateRef{kind, name}]; ok {
			return tpl, nil
		}
		return nil, apierrors.NewNotFound(v1alpha1.Resource("templates"), name)
	}
}

// renderer is one Render pass over a blueprint.
type renderer struct {
	in   Input
	pass *Pass
}

// resource renders one resource, as the controller realizes it, up to the object to apply;
// its outputs are then read as far as they can be known without a cluster.
func (r *renderer) resource(res *v1alpha1.BlueprintResource) RenderedResource {
	result, _ := r.pass.Stamp(res, nil)
	// Later resources see this one; it cannot read itself, as in the controller.
	defer func() { r.pass.Done[res.Name] = result }()
	out := RenderedResource{Name: res.Name, Template: result.Status.TemplateRef, Option: result.Option, Params: result.Params, Object: result.Object, Documents: result.Documents}
	for _, in := range result.Status.Inputs {
		out.Inputs = append(out.Inputs, in.Name)
	}
	if out.Option != nil {
		if m, err := selector.MatchOption(out.Option.Selector, selector.NewOwner(r.pass.Owner.Fields)); err == nil {
			out.OptionRequirements = m.Score
		}
	}
	switch {
	case result.PassThrough:
		out.Outputs, out.OutputsFrom = result.Values, OutputsPassedThrough
	case result.Object != nil:
		result.Values, out.OutputsFrom, result.Submitted = r.outputs(res, result)
		out.Outputs = result.Values
	}
	out.Submitted = result.Submitted
	return out
}

// outputs are the values later resources read from a stamped resource, where they came
// from, and its ResourceSubmitted; nil values when they are not known. Values given by
// hand override what was read, and stand in for all of it when they name every output.
func (r *renderer) outputs(res *v1alpha1.BlueprintResource, result *Result) (map[string]any, string, metav1.Condition) {
	tpl := result.Template
	names := make([]string, 0, 2)
	for _, p := range tpl.Outputs {
		names = append(names, p.Name)
	}
	if tpl.Deployment != nil {
		names = append(names, v1alpha1.OutputURL, v1alpha1.OutputRevision)
	}
	given := r.in.Outputs[res.Name]
	values, from, problem := r.read(res, result)
	if problem != nil {
		if len(given) == 0 || slices.ContainsFunc(names, func(n string) bool { _, ok := given[n]; return !ok }) {
			return nil, "", *problem
		}
		values = nil
	}
	if len(given) > 0 {
		values = maps.Clone(values)
		if values == nil {
			values = map[string]any{}
		}
		maps.Copy(values, given)
		from = OutputsGiven
	}
	return values, from, Submitted(metav1.ConditionTrue, v1alpha1.ReasonResourceSubmissionComplete, "")
}

// read reads a stamped resource's outputs as the controller would from its live object:
// from the observed one when there is one, otherwise from the stamped object itself when
// the template's output paths lead to fields it sets. It returns ResourceSubmitted when
// they cannot be known.
func (r *renderer) read(res *v1alpha1.BlueprintResource, result *Result) (map[string]any, string, *metav1.Condition) {
	tpl, obj := result.Template, result.Object
	notKnown := func(reason, format string, args ...any) (map[string]any, string, *metav1.Condition) {
		c := Submitted(metav1.ConditionUnknown, reason, format, args...)
		return nil, "", &c
	}
	if live := observed(r.in.Observed, obj, r.pass.Owner, res.Name); live != nil {
		seen := result.Observe(live)
		switch {
		case seen.Submitted != nil:
			return nil, "", seen.Submitted
		case seen.Held != "":
			return notKnown(v1alpha1.ReasonMissingValueAtPath, "outputs are held back: %s", seen.Held)
		}
		return seen.Read, OutputsObserved, nil
	}
	switch {
	case tpl.Deployment != nil:
		return notKnown(v1alpha1.ReasonConditionNotMet, "whether object [%s/%s] succeeded is not known without a cluster", obj.GetKind(), obj.GetName())
	case tpl.Spec.IsImmutable() && len(tpl.Outputs) > 0:
		return notKnown(v1alpha1.ReasonMissingValueAtPath,
			"the outputs of a new object [%s/%s...] are read once it is healthy, which is not known without a cluster", obj.GetKind(), obj.GetGenerateName())
	}
	values, err := stamp.ReadOutputs(obj, tpl.Outputs)
	var oe *stamp.OutputError
	if errors.As(err, &oe) && errors.Is(err, expr.ErrNotFound) {
		return notKnown(v1alpha1.ReasonMissingValueAtPath,
			"cannot read value [%s] from object [%s/%s] without a cluster: the template does not set it", oe.Path, obj.GetKind(), obj.GetName())
	}
	if c := outputProblem(tpl, obj, err, metav1.Condition{}); c != nil {
		return nil, "", c
	}
	return values, OutputsStamped, nil
}

// observed is the live object among objs that a resource of the owner stamped as obj: the
// one of obj's kind and name, or, for an immutable template (which names its objects by
// generateName), the last of obj's kind labelled with the owner and the resource.
func observed(objs []*unstructured.Unstructured, obj *unstructured.Unstructured, owner *Owner, resource string) *unstructured.Unstructured {
	var found *unstructured.Unstructured
	for _, o := range objs {
		if o.GroupVersionKind() != obj.GroupVersionKind() {
			continue
		}
		labels := o.GetLabels()
		switch {
		case obj.GetName() != "" && o.GetName() == obj.GetName():
			return o
		case obj.GetName() == "" && labels[owner.Kind.Labels.Name] == owner.Object.GetName() && labels[v1alpha1.LabelResourceName] == resource:
			found = o
		}
	}
	return found
}

// Judge is what the controller would report for an object stamped from a template, read
// offline (kubectl carto lint --rule): the resource's ResourceSubmitted (whether the
// template's outputs can be read from it), Healthy, Ready, and the conditions of the
// template's conditionRules. A ClusterDeploymentTemplate's deployment input is taken as
// given.
func Judge(tplObj v1alpha1.Template, live *unstructured.Unstructured) []metav1.Condition {
	tpl := TemplateOf(tplObj)
	if c := unusable(tpl); c != nil {
		return []metav1.Condition{*c}
	}
	resource := &Result{Status: v1alpha1.ResourceStatus{Name: tpl.Name}, Template: tpl, Inputs: stamp.Inputs{Deployment: &stamp.Source{}}}
	seen := resource.Observe(live)
	submitted := Submitted(metav1.ConditionTrue, v1alpha1.ReasonResourceSubmissionComplete, "")
	if seen.Submitted != nil {
		submitted = *seen.Submitted
	}
	ready := health.ResourceReady(0, &submitted, &seen.Healthy)
	return append([]metav1.Condition{submitted, seen.Healthy, ready}, seen.Rules...)
}
