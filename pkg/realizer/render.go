package realizer

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/expr"
	"github.com/surveyor-dev/surveyor/pkg/health"
	"github.com/surveyor-dev/surveyor/pkg/realizer/selector"
	"github.com/surveyor-dev/surveyor/pkg/realizer/stamp"
	"github.com/surveyor-dev/surveyor/pkg/workitems"
)

// RenderInput is what Render reads in place of a cluster.
type RenderInput struct {
	// Owner is the Workload or Deliverable to render. Without a uid (a file never applied)
	// its stamped objects' owner reference, and so their digest, lack one.
	Owner v1alpha1.Owner
	// Objects are the blueprints and templates to choose from; other kinds are ignored.
	Objects []client.Object
	// Observed are live objects, e.g. saved with `kubectl get -o yaml`: a resource whose
	// stamped object is among them has its outputs read from it, as the controller would.
	Observed []*unstructured.Unstructured
	// Outputs are output values given by hand, by resource and then output name (url,
	// revision, image, config). They win over observed and stamped values.
	Outputs map[string]map[string]any
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
	// OutputsGiven are outputs given by hand (RenderInput.Outputs), at least in part.
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

// Render is the offline realizer behind `kubectl carto render` (DESIGN §10): it selects
// an owner's blueprint among the given objects, resolves options and params, and stamps
// every resource it can, through the same pure functions the controller uses, so each
// object is exactly what the controller would apply. It reads no cluster: a blueprint
// counts as Ready when every template it references is among the objects, and an output
// is known only when it was given, can be read from an observed object, or is a field the
// stamped object itself sets. What cannot be stamped is said, in the words the controller
// would put in the owner's status, never guessed.
//
// An error is returned only for an owner that cannot be read at all.
func Render(in RenderInput) (*Rendering, error) {
	kind := ownerKindOf(in.Owner)
	if kind == nil {
		return nil, fmt.Errorf("cannot render a %T: only Workloads and Deliverables have blueprints", in.Owner)
	}
	object, err := ownerObject(in.Owner, kind.kind)
	if err != nil {
		return nil, err
	}
	templates := map[templateRef]client.Object{}
	var blueprints []*blueprint
	for _, o := range in.Objects {
		if t := templateOf(o); t.kind != "" {
			templates[templateRef{t.kind, t.name}] = o
		}
	}
	for _, o := range in.Objects {
		if blueprintKindOf(o) != kind.blueprint {
			continue
		}
		bp := kind.blueprint.of(o)
		_, missing, _ := templatesOf(bp, func(ref templateRef) (client.Object, error) {
			if tpl, ok := templates[ref]; ok {
				return tpl, nil
			}
			return nil, apierrors.NewNotFound(v1alpha1.Resource(strings.ToLower(ref.kind)), ref.name)
		})
		// A blueprint's status as its reconciler would write it, from the templates given.
		bp.status = &v1alpha1.BlueprintStatus{ObservedGeneration: bp.generation, Conditions: blueprintConditions(missing, bp.generation)}
		blueprints = append(blueprints, bp)
	}

	bp, cond := selectBlueprint(kind, object, blueprints)
	out := &Rendering{Selection: withGeneration(cond, in.Owner.GetGeneration())}
	if bp == nil {
		return out, nil
	}
	out.Blueprint = &v1alpha1.BlueprintReference{Kind: bp.kind, Name: bp.name}
	if m, err := selector.MatchBlueprint(bp.selector, selector.NewOwner(object)); err == nil {
		out.Requirements = m.Score
	}
	if cond.Status != metav1.ConditionTrue {
		return out, nil
	}
	ns, name := serviceAccount(in.Owner, bp)
	out.ServiceAccount = ns + "/" + name

	r := renderer{in: in, kind: kind, object: object, bp: bp, templates: templates, byName: map[string]*resourceResult{}}
	for i := range bp.resources {
		out.Resources = append(out.Resources, r.resource(&bp.resources[i]))
	}
	return out, nil
}

// ownerKindOf is the kind descriptor of an owner object, nil for anything else.
func ownerKindOf(owner v1alpha1.Owner) *ownerKind {
	switch owner.(type) {
	case *v1alpha1.Workload:
		return workloadKind
	case *v1alpha1.Deliverable:
		return deliverableKind
	}
	return nil
}

// blueprintKindOf is the kind descriptor of a blueprint object, nil for anything else.
func blueprintKindOf(o client.Object) *blueprintKind {
	switch o.(type) {
	case *v1alpha1.ClusterSupplyChain:
		return supplyChainKind
	case *v1alpha1.ClusterDelivery:
		return deliveryKind
	}
	return nil
}

// renderer is one Render pass over a blueprint: the offline counterpart of realization.
type renderer struct {
	in        RenderInput
	kind      *ownerKind
	object    map[string]any
	bp        *blueprint
	templates map[templateRef]client.Object
	// byName are the resources rendered so far, as the controller's inputs read them.
	byName map[string]*resourceResult
}

// resource renders one resource, in the order the controller realizes it: inputs,
// option, template, stamp, outputs.
func (r *renderer) resource(res *resourceSpec) RenderedResource {
	out := RenderedResource{Name: res.name}
	result := &resourceResult{status: v1alpha1.ResourceStatus{Name: res.name}}
	// Later resources see this one; it cannot read itself, as in the controller.
	defer func() { r.byName[res.name] = result }()
	done := func(c metav1.Condition) RenderedResource {
		result.submitted, out.Submitted = c, c
		return out
	}

	inputs, waiting := inputsOf(r.kind, r.byName, res, result)
	for _, in := range result.status.Inputs {
		out.Inputs = append(out.Inputs, in.Name)
	}
	if waiting != nil {
		return done(*waiting)
	}

	name := res.templateName
	if name == "" {
		choice, c := chooseOption(r.kind, res, r.object)
		if c != nil {
			return done(*c)
		}
		for i, o := range res.options {
			if o.Name == choice.Template && o.PassThrough == choice.PassThrough {
				out.Option = &res.options[i]
				if m, err := selector.MatchOption(o.Selector, selector.NewOwner(r.object)); err == nil {
					out.OptionRequirements = m.Score
				}
			}
		}
		if choice.PassThrough != "" {
			p, c := passedThrough(res, choice.PassThrough, r.byName)
			if c != nil {
				return done(*c)
			}
			result.values = p.values
			out.Outputs, out.OutputsFrom = p.values, OutputsPassedThrough
			return done(submitted(metav1.ConditionTrue, v1alpha1.ReasonPassThrough, ""))
		}
		name = choice.Template
	}
	out.Template = &v1alpha1.TemplateReference{APIVersion: v1alpha1.GroupVersion.String(), Kind: res.templateKind, Name: name}
	tplObj, ok := r.templates[templateRef{res.templateKind, name}]
	if !ok {
		return done(*templateMissing(res.templateKind, name, apierrors.NewNotFound(v1alpha1.Resource("templates"), name)))
	}
	tpl := templateOf(tplObj)
	if c := unusable(tpl); c != nil {
		return done(*c)
	}
	params, err := stamp.ResolveParams(tpl.spec.Params, r.bp.params, res.params, r.in.Owner.GetParams())
	if err != nil {
		return done(stampFailure(res, tpl, err))
	}
	out.Params = params
	values := make(map[string]any, len(params))
	for _, p := range params {
		values[p.Name] = p.Value
	}
	obj, err := stampObject(r.kind, r.in.Owner, r.object, r.bp.name, res.name, tpl, values, inputs)
	if err != nil {
		return done(stampFailure(res, tpl, err))
	}
	out.Object = obj

	values, from, c := r.outputs(res, tpl, obj, inputs.Deployment)
	result.values, out.Outputs, out.OutputsFrom = values, values, from
	return done(c)
}

// outputs are the values later resources read from a stamped resource, where they came
// from, and its ResourceSubmitted; nil values when they are not known. Values given by
// hand override what was read, and stand in for all of it when they name every output.
func (r *renderer) outputs(res *resourceSpec, tpl template, obj *unstructured.Unstructured, deployment *stamp.Source) (map[string]any, string, metav1.Condition) {
	names := make([]string, 0, 2)
	for _, p := range tpl.outputs {
		names = append(names, p.Name)
	}
	if tpl.deployment != nil {
		names = append(names, stamp.OutputURL, stamp.OutputRevision)
	}
	given := r.in.Outputs[res.name]
	values, from, problem := r.read(res, tpl, obj, deployment)
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
	return values, from, submitted(metav1.ConditionTrue, v1alpha1.ReasonResourceSubmissionComplete, "")
}

// read reads a stamped resource's outputs as the controller would from its live object:
// from the observed one when there is one, otherwise from the stamped object itself when
// the template's output paths lead to fields it sets. It returns ResourceSubmitted when
// they cannot be known.
func (r *renderer) read(res *resourceSpec, tpl template, obj *unstructured.Unstructured, deployment *stamp.Source) (map[string]any, string, *metav1.Condition) {
	notKnown := func(reason, format string, args ...any) (map[string]any, string, *metav1.Condition) {
		c := submitted(metav1.ConditionUnknown, reason, format, args...)
		return nil, "", &c
	}
	if live := observed(r.in.Observed, obj, r.kind, r.in.Owner, res.name); live != nil {
		values, err := readOutputs(res.name, tpl, live, deployment)
		healthy := judge(live, tpl, err == nil, nil)
		if c := outputProblem(tpl, live, err, healthy); c != nil {
			return nil, "", c
		}
		if held := heldBack(tpl, live, healthy); held != "" {
			return notKnown(v1alpha1.ReasonMissingValueAtPath, "outputs are held back: %s", held)
		}
		return values, OutputsObserved, nil
	}
	switch {
	case tpl.deployment != nil:
		return notKnown(v1alpha1.ReasonConditionNotMet, "whether object [%s/%s] succeeded is not known without a cluster", obj.GetKind(), obj.GetName())
	case tpl.spec.IsImmutable() && len(tpl.outputs) > 0:
		return notKnown(v1alpha1.ReasonMissingValueAtPath,
			"the outputs of a new object [%s/%s...] are read once it is healthy, which is not known without a cluster", obj.GetKind(), obj.GetGenerateName())
	}
	values, err := stamp.ReadOutputs(obj, tpl.outputs)
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
func observed(objs []*unstructured.Unstructured, obj *unstructured.Unstructured, kind *ownerKind, owner v1alpha1.Owner, resource string) *unstructured.Unstructured {
	var found *unstructured.Unstructured
	for _, o := range objs {
		if o.GroupVersionKind() != obj.GroupVersionKind() {
			continue
		}
		labels := o.GetLabels()
		switch {
		case obj.GetName() != "" && o.GetName() == obj.GetName():
			return o
		case obj.GetName() == "" && labels[kind.labels.name] == owner.GetName() && labels[v1alpha1.LabelResourceName] == resource:
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
func Judge(tplObj client.Object, live *unstructured.Unstructured) []metav1.Condition {
	tpl := templateOf(tplObj)
	if tpl.spec == nil {
		return nil
	}
	if c := unusable(tpl); c != nil {
		return []metav1.Condition{*c}
	}
	_, err := readOutputs(tpl.name, tpl, live, &stamp.Source{})
	scope := expr.NewScope(live.Object)
	healthy := judge(live, tpl, err == nil, scope)
	c := submitted(metav1.ConditionTrue, v1alpha1.ReasonResourceSubmissionComplete, "")
	if problem := outputProblem(tpl, live, err, healthy); problem != nil {
		c = *problem
	}
	ready := health.ResourceReady(0, &c, &healthy)
	return append([]metav1.Condition{c, healthy, ready}, workitems.Evaluate(tpl.spec.ConditionRules, live, scope)...)
}
