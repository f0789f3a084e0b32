package render

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/expr"
	"github.com/surveyor-dev/surveyor/pkg/health"
	"github.com/surveyor-dev/surveyor/pkg/render/selector"
	"github.com/surveyor-dev/surveyor/pkg/render/stamp"
	"github.com/surveyor-dev/surveyor/pkg/workitems"
)

// AnnotationStampDigest holds the digest of the stamp last applied to an object. With the
// live object holding every stamped field, an equal digest means an apply would change
// nothing, so none is sent. (A field removed from the template changes the digest, which
// a subset check alone would miss.)
const AnnotationStampDigest = "carto.run/stamp-digest"

// Pass is one pass over an owner's blueprint: the resources are taken through it in order,
// each reading the outputs of those before it.
type Pass struct {
	// Owner is the Workload or Deliverable the blueprint is realized for.
	Owner *Owner
	// Blueprint is the supply chain or delivery whose resources the pass takes through.
	Blueprint *Blueprint
	// Template reads a template the blueprint references; a missing one is a NotFound
	// error. It is the only way templates come in: the pipeline reads no cluster.
	Template func(kind, name string) (v1alpha1.Template, error)
	// YTT evaluates the templates written in ytt; without one they fail to stamp.
	YTT YTT
	// Done are the resources taken through so far, by name.
	Done map[string]*Result
}

// Result is what became of one resource.
type Result struct {
	// Status is the resource's entry in its owner's status, without conditions unless
	// Frozen.
	Status v1alpha1.ResourceStatus
	// Submitted and Healthy are the resource's ResourceSubmitted and Healthy conditions.
	Submitted, Healthy metav1.Condition
	// Frozen marks a completed resource: Status (conditions included) is kept as is.
	Frozen bool
	// Rules are the conditions of the template's conditionRules, e.g. Complete.
	Rules []metav1.Condition
	// Read are the outputs read from the resource's object (or passed through); nil until
	// every declared output could be read. Values are what later resources read: Read,
	// unless it is held back.
	Read, Values map[string]any
	// Secret marks values read from a Secret (or passed through from one), or stamped
	// from such values.
	Secret bool
	// SecretInputs are the values of the Secret-derived inputs this resource was stamped
	// from: a message about its object (an API server's rejection) must not quote them.
	SecretInputs []any
	// PassThrough marks a resource that forwarded an input: it has no object.
	PassThrough bool
	// Held says why a submitted resource's outputs are held back from later resources
	// (an immutable object that is not healthy yet); empty otherwise.
	Held string

	// Template is the template the resource is stamped from; zero until it was read.
	Template Template
	// Option is the option chosen among the templateRef's options, nil without options.
	Option *v1alpha1.TemplateOption
	// Params are the params the template saw, with their origins.
	Params []stamp.Param
	// Inputs are the outputs of earlier resources it was stamped from.
	Inputs stamp.Inputs
	// Object is the stamped object, to be applied; nil when there is none, and then
	// Submitted says why.
	Object *unstructured.Unstructured
	// Documents is how many documents a ytt template's output had; only the first is the
	// object (lint warns of more).
	Documents int
}

// Submitted is a ResourceSubmitted condition.
func Submitted(status metav1.ConditionStatus, reason, format string, args ...any) metav1.Condition {
	return metav1.Condition{Type: v1alpha1.ConditionResourceSubmitted, Status: status, Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// TemplateMissing is ResourceSubmitted for a template that could not be read because it
// does not exist (or its kind is none), or nil for any other err.
func TemplateMissing(kind, name string, err error) *metav1.Condition {
	var c metav1.Condition
	switch {
	case errors.Is(err, ErrUnknownTemplateKind):
		c = Submitted(metav1.ConditionFalse, v1alpha1.ReasonTemplateObjectRetrievalFailure, "unable to get template [%s/%s]: %v", kind, name, err)
	case apierrors.IsNotFound(err):
		c = Submitted(metav1.ConditionFalse, v1alpha1.ReasonTemplateObjectRetrievalFailure, "unable to get template [%s/%s]: not found", kind, name)
	default:
		return nil
	}
	return &c
}

// Stamp takes a resource from its inputs to the object to apply: inputs, option, template,
// params, stamp, ownership and labels. prev is the resource's last reported status, nil
// for a new resource: until a new object is stamped, the old one (and the template it
// came from) is still the resource's.
//
// The result's Object is what to apply. Without one, the resource passed an input through
// (PassThrough), or Submitted says what stopped it; Healthy is set when nothing stamped
// before is to be judged either. An error is returned as well when a retry may get further
// (a template that could not be read for another reason than its absence).
func (p *Pass) Stamp(res *v1alpha1.BlueprintResource, prev *v1alpha1.ResourceStatus) (*Result, error) {
	out := &Result{Status: v1alpha1.ResourceStatus{Name: res.Name, ObservedGeneration: p.Owner.Object.GetGeneration()}}
	if prev != nil {
		out.Status.StampedRef, out.Status.TemplateRef = prev.StampedRef, prev.TemplateRef
	}
	fail := func(c metav1.Condition) (*Result, error) {
		out.Submitted = c
		return out, nil
	}

	inputs, waiting := p.inputs(res, out)
	out.Inputs = inputs
	if waiting != nil {
		return fail(*waiting)
	}

	name := res.TemplateRef.Name
	if name == "" {
		choice, c := p.chooseOption(res)
		if c != nil {
			return fail(*c)
		}
		for i, o := range res.TemplateRef.Options {
			if o.Name == choice.Template && o.PassThrough == choice.PassThrough {
				out.Option = &res.TemplateRef.Options[i]
			}
		}
		if choice.PassThrough != "" {
			return p.passThrough(res, choice.PassThrough, out), nil
		}
		name = choice.Template
	}
	kind := res.TemplateRef.Kind
	out.Status.TemplateRef = &v1alpha1.TemplateReference{APIVersion: v1alpha1.GroupVersion.String(), Kind: kind, Name: name}

	obj, err := p.Template(kind, name)
	if c := TemplateMissing(kind, name, err); c != nil {
		return fail(*c)
	}
	if err != nil {
		out.Submitted = Submitted(metav1.ConditionUnknown, v1alpha1.ReasonTemplateObjectRetrievalFailure, "unable to get template [%s/%s]: %v", kind, name, err)
		return out, err
	}
	tpl := TemplateOf(obj)
	out.Template = tpl
	if c := unusable(tpl); c != nil {
		return fail(*c)
	}

	out.Params, err = stamp.ResolveParams(tpl.Spec.Params, p.Blueprint.Params, res.Params, p.Owner.Object.GetParams())
	if err == nil {
		out.Object, out.Documents, err = p.object(res.Name, tpl, out.Params, inputs)
	}
	if err != nil {
		// A template's error can quote the inputs it was given.
		// Cartographer's shape (its reference, A6), except that a delivery says so.
		c := Submitted(metav1.ConditionFalse, v1alpha1.ReasonTemplateStampFailure, "unable to stamp object for resource [%s] for template [%s/%s] in %s [%s]: %v",
			res.Name, tpl.Kind, tpl.Name, p.Owner.Kind.Terms.Blueprint, p.Blueprint.Name, err)
		c.Message = Redact(c.Message, SecretTexts(out.SecretInputs, nil))
		return fail(c)
	}
	return out, nil
}

// chooseOption resolves a templateRef's options for the owner.
func (p *Pass) chooseOption(res *v1alpha1.BlueprintResource) (selector.Choice, *metav1.Condition) {
	choice, err := selector.ChooseOption(p.Owner.Kind.Terms, selector.NewOwner(p.Owner.Fields), res.TemplateRef.Options)
	if err == nil {
		return choice, nil
	}
	reason := v1alpha1.ReasonResolveTemplateOptionsError
	var none *selector.OptionsMatchError
	if errors.As(err, &none) {
		reason = v1alpha1.ReasonTemplateOptionsMatchError
	}
	c := Submitted(metav1.ConditionFalse, reason, "unable to choose a template for resource [%s]: %v", res.Name, err)
	return choice, &c
}

// object stamps the template with the given params and inputs, by $(...)$ interpolation or
// by ytt, and makes the object the owner's: its namespace, Surveyor's labels, the owner as
// controller owner and the digest of it all. documents is how many documents a ytt
// template's output had.
func (p *Pass) object(resource string, tpl Template, resolved []stamp.Param, in stamp.Inputs) (obj *unstructured.Unstructured, documents int, err error) {
	params := make(map[string]any, len(resolved))
	for _, r := range resolved {
		params[r.Name] = r.Value
	}
	kind, owner := p.Owner.Kind, p.Owner.Object
	labels := map[string]string{
		kind.Labels.Name:                  owner.GetName(),
		kind.Labels.Namespace:             owner.GetNamespace(),
		kind.Labels.Blueprint:             p.Blueprint.Name,
		v1alpha1.LabelResourceName:        resource,
		v1alpha1.LabelTemplateKind:        tpl.Kind,
		v1alpha1.LabelClusterTemplateName: tpl.Name,
		v1alpha1.LabelTemplateLifecycle:   tpl.Spec.LifecycleLabel(),
	}
	context := stamp.NewContext(kind.ContextKeys, p.Owner.Fields, params, labels, in)
	switch {
	case tpl.Spec.Template != nil:
		obj, err = stamp.Stamp(tpl.Spec.Template.Raw, context)
	case tpl.Spec.Ytt != "":
		obj, documents, err = p.evalYTT(tpl.Spec.Ytt, context)
	default: // the CRD rejects it
		err = errors.New("unknown resource template type, expected either template or ytt")
	}
	if err != nil {
		return nil, documents, err
	}
	switch {
	case tpl.Spec.IsImmutable() && (obj.GetName() != "" || obj.GetGenerateName() == ""):
		return nil, documents, fmt.Errorf("a template with lifecycle %s must set metadata.generateName, not metadata.name", tpl.Spec.Lifecycle)
	case obj.GetAPIVersion() == "" || obj.GetKind() == "" || (obj.GetName() == "" && !tpl.Spec.IsImmutable()):
		return nil, documents, errors.New("the stamped object needs apiVersion, kind and metadata.name")
	case obj.GetNamespace() != "" && obj.GetNamespace() != owner.GetNamespace():
		// Only a ytt template can get here: the CRD keeps a namespace out of template.
		return nil, documents, errors.New("cannot set namespace in resource template")
	}
	if err := own(obj, owner, kind.Kind, labels); err != nil {
		return nil, documents, err
	}
	return obj, documents, nil
}

// Digest is a stable digest of a JSON-encodable value (map keys are sorted).
func Digest(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// inputs gathers the outputs of the earlier resources this one consumes, in the order
// sources, images, deployment, configs, and names them in out's status. A producer that
// has not delivered yet makes this resource wait, carrying the producer's reason.
func (p *Pass) inputs(res *v1alpha1.BlueprintResource, out *Result) (stamp.Inputs, *metav1.Condition) {
	in := stamp.Inputs{Sources: map[string]stamp.Source{}, Images: map[string]any{}, Configs: map[string]any{}}
	var deployment []v1alpha1.ResourceReference
	if res.Deployment != nil {
		// The deployment goes by "deployment" in the context and in messages.
		deployment = []v1alpha1.ResourceReference{{Name: "deployment", Resource: res.Deployment.Resource}}
	}
	groups := []struct {
		refs  []v1alpha1.ResourceReference
		names []string
		set   func(name string, values map[string]any)
	}{
		{res.Sources, []string{v1alpha1.OutputURL, v1alpha1.OutputRevision}, func(n string, v map[string]any) {
			in.Sources[n] = stamp.Source{URL: v[v1alpha1.OutputURL], Revision: v[v1alpha1.OutputRevision]}
		}},
		{res.Images, []string{v1alpha1.OutputImage}, func(n string, v map[string]any) { in.Images[n] = v[v1alpha1.OutputImage] }},
		{deployment, []string{v1alpha1.OutputURL, v1alpha1.OutputRevision}, func(_ string, v map[string]any) {
			in.Deployment = &stamp.Source{URL: v[v1alpha1.OutputURL], Revision: v[v1alpha1.OutputRevision]}
		}},
		{res.Configs, []string{v1alpha1.OutputConfig}, func(n string, v map[string]any) { in.Configs[n] = v[v1alpha1.OutputConfig] }},
	}
	for _, g := range groups {
		for _, ref := range g.refs {
			out.Status.Inputs = append(out.Status.Inputs, v1alpha1.Input{Name: ref.Resource})
			producer, ok := p.Done[ref.Resource]
			if ok && producer.Secret {
				// A value derived from a Secret is as secret as the Secret.
				out.Secret = true
				out.SecretInputs = append(out.SecretInputs, producer.Values)
			}
			if !ok {
				c := Submitted(metav1.ConditionFalse, v1alpha1.ReasonTemplateStampFailure,
					"input [%s] of resource [%s] refers to resource [%s], which is not an earlier resource of the %s", ref.Name, res.Name, ref.Resource, p.Owner.Kind.Terms.Blueprint)
				return in, &c
			}
			if producer.Values == nil {
				c := producer.Submitted
				if c.Status == metav1.ConditionTrue {
					c.Status, c.Reason = metav1.ConditionUnknown, v1alpha1.ReasonMissingValueAtPath
				}
				if c.Status == metav1.ConditionFalse {
					c.Status = metav1.ConditionUnknown
				}
				why := producer.Submitted.Message
				if producer.Held != "" {
					why = producer.Held
				}
				c.Message = fmt.Sprintf("waiting for input [%s] from resource [%s]: %s", ref.Name, ref.Resource, why)
				return in, &c
			}
			for _, n := range g.names {
				if _, ok := producer.Values[n]; !ok {
					c := Submitted(metav1.ConditionFalse, v1alpha1.ReasonTemplateStampFailure,
						"input [%s] of resource [%s]: resource [%s] has no %s output", ref.Name, res.Name, ref.Resource, n)
					return in, &c
				}
			}
			g.set(ref.Name, producer.Values)
		}
	}
	return in, nil
}

// passThrough forwards the named input's outputs unchanged; nothing is stamped.
func (p *Pass) passThrough(res *v1alpha1.BlueprintResource, input string, out *Result) *Result {
	var producer string
	for _, refs := range [][]v1alpha1.ResourceReference{res.Sources, res.Images, res.Configs} {
		for _, ref := range refs {
			if ref.Name == input {
				producer = ref.Resource
			}
		}
	}
	from, ok := p.Done[producer]
	if !ok || from.Values == nil {
		out.Submitted = Submitted(metav1.ConditionFalse, v1alpha1.ReasonTemplateStampFailure,
			"resource [%s] passes through input [%s], which is not among its inputs", res.Name, input)
		out.Healthy = Health(nil, Template{}, false, nil)
		return out
	}
	out.Status.StampedRef, out.Status.TemplateRef = nil, nil
	out.PassThrough = true
	out.Read, out.Values, out.Secret = from.Values, from.Values, from.Secret
	out.Submitted = Submitted(metav1.ConditionTrue, v1alpha1.ReasonPassThrough, "")
	out.Healthy = metav1.Condition{Type: v1alpha1.ConditionHealthy, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonOutputsAvailable}
	return out
}

// Observation is what a resource's live object says of it: its health, the conditions of
// its template's conditionRules, and its outputs. The caller takes what it needs into its
// Result.
type Observation struct {
	// Healthy is the object's Healthy condition, by its template's rule.
	Healthy metav1.Condition
	// Rules are the conditions of the template's conditionRules, e.g. Complete.
	Rules []metav1.Condition
	// Secret says whether the resource is secret: stamped from Secret-derived values, or a
	// Secret itself. Healthy's and the rules' messages are redacted then.
	Secret bool
	// Submitted is the ResourceSubmitted condition that replaces the resource's when its
	// outputs could not be read (MissingValueAtPath, or a deployment's verdict); nil when
	// they were.
	Submitted *metav1.Condition
	// Read are the outputs read, nil when Submitted is set; Values are what later
	// resources read: Read, unless it is held back.
	Read, Values map[string]any
	// Held says why Read is held back from later resources (an immutable object that is
	// not healthy yet); empty otherwise.
	Held string
}

// Observe reads the outputs of the resource's live object (handed in: the pipeline never
// fetches one) and judges its health and rules, by r's template, for r's name, deployment
// input and secrecy; r is not changed. An output that cannot be read turns
// ResourceSubmitted into MissingValueAtPath; a deployment that has not succeeded, into its
// verdict. A ClusterDeploymentTemplate passes the deployment input (r.Inputs.Deployment)
// through as its outputs.
func (r *Result) Observe(live *unstructured.Unstructured) Observation {
	tpl := r.Template
	values, err := readOutputs(r.Status.Name, tpl, live, r.Inputs.Deployment)
	scope := expr.NewScope(live.Object) // one CEL budget for the object's health and rules
	seen := Observation{
		Healthy: Health(live, tpl, err == nil, scope),
		Rules:   workitems.Evaluate(tpl.Spec.ConditionRules, live, scope),
		Secret:  r.Secret || IsSecret(live),
	}
	if seen.Secret {
		redactMessages(&seen.Healthy, seen.Rules)
	}
	if c := outputProblem(tpl, live, err, seen.Healthy); c != nil {
		seen.Submitted = c
		return seen
	}
	seen.Read, seen.Values = values, values
	if seen.Held = heldBack(tpl, live, seen.Healthy); seen.Held != "" {
		seen.Values = nil
	}
	return seen
}

// JudgeStale judges a resource that got no new object this time by the one stamped before
// (live, nil when there is none) and the template it came from: its Healthy condition and
// the conditions of the template's conditionRules (nil without a template). r is not
// changed; only its secrecy is read.
func (r *Result) JudgeStale(tpl Template, live *unstructured.Unstructured) (healthy metav1.Condition, rules []metav1.Condition) {
	healthy = Health(live, tpl, false, nil)
	if tpl.Spec != nil {
		rules = workitems.Evaluate(tpl.Spec.ConditionRules, live, nil)
	}
	if r.Secret || (live != nil && IsSecret(live)) {
		redactMessages(&healthy, rules)
	}
	return healthy, rules
}

// Unobserved is the result for a resource its owner completed without: it was never
// stamped, and never will be.
func Unobserved(kind *v1alpha1.OwnerKind, name string, generation int64) *Result {
	return &Result{
		Status:    v1alpha1.ResourceStatus{Name: name, ObservedGeneration: generation},
		Submitted: Submitted(metav1.ConditionUnknown, kind.CompleteReason, "the %s completed before this resource was stamped", kind.Singular()),
		Healthy:   Health(nil, Template{}, false, nil),
	}
}

// Health is the Healthy condition of a resource's object (nil when there is none) by its
// template's rule; outputsRead says whether the template's outputs could be read from it,
// and scope, when not nil, is the CEL budget it shares with the object's other rules.
func Health(obj *unstructured.Unstructured, tpl Template, outputsRead bool, scope *expr.Scope) metav1.Condition {
	in := health.Input{Object: obj, HasOutputs: len(tpl.Outputs) > 0 || tpl.Deployment != nil, OutputsRead: outputsRead, Scope: scope}
	if tpl.Spec != nil {
		in.Rule, in.Field = health.RuleOf(tpl.Spec)
	}
	return health.Evaluate(in)
}

// outputProblem is ResourceSubmitted when the outputs of a live object could not be read
// (err from readOutputs), worded by its health; nil when they were.
func outputProblem(tpl Template, live *unstructured.Unstructured, err error, healthy metav1.Condition) *metav1.Condition {
	var syntax *expr.SyntaxError
	var pending *pendingError
	var c metav1.Condition
	switch {
	case err == nil:
		return nil
	case errors.As(err, &syntax):
		c = Submitted(metav1.ConditionFalse, v1alpha1.ReasonTemplateStampFailure,
			"template [%s/%s] has an invalid output path: %v", tpl.Kind, tpl.Name, err)
	case errors.As(err, &pending):
		c = pending.condition
	default:
		c = missingValue(err, live, healthy)
	}
	return &c
}

// missingValue is ResourceSubmitted for an output that cannot be read yet, worded by what
// the object's health says about why (DESIGN §3.6).
func missingValue(err error, obj *unstructured.Unstructured, healthy metav1.Condition) metav1.Condition {
	path := err.Error()
	var oe *stamp.OutputError
	if errors.As(err, &oe) {
		path = oe.Path
	}
	ref := fmt.Sprintf("%s/%s", obj.GetKind(), obj.GetName())
	switch healthy.Status {
	case metav1.ConditionTrue:
		return Submitted(metav1.ConditionUnknown, v1alpha1.ReasonMissingValueAtPath,
			"cannot read value [%s] from healthy object [%s], contact Platform Eng", path, ref)
	case metav1.ConditionFalse:
		return Submitted(metav1.ConditionUnknown, v1alpha1.ReasonMissingValueAtPath,
			"cannot read value [%s] from unhealthy object [%s], examine object, particularly whether it is receiving proper inputs", path, ref)
	}
	return Submitted(metav1.ConditionUnknown, v1alpha1.ReasonMissingValueAtPath, "waiting to read value [%s] from object [%s]", path, ref)
}

// heldBack says why the outputs of a live object are held back from later resources, or
// "": later resources are stamped from an immutable object only once it is healthy (a run
// that succeeded).
func heldBack(tpl Template, live *unstructured.Unstructured, healthy metav1.Condition) string {
	if !tpl.Spec.IsImmutable() || healthy.Status == metav1.ConditionTrue {
		return ""
	}
	return fmt.Sprintf("object [%s/%s] is not healthy yet", live.GetKind(), live.GetName())
}

// pendingError is an output that is not there yet for a reason the resource's
// ResourceSubmitted condition states (a deployment that has not succeeded).
type pendingError struct{ condition metav1.Condition }

func (e *pendingError) Error() string { return e.condition.Message }

// readOutputs reads the template's outputs from its object. A ClusterDeploymentTemplate
// has no output paths: once its object succeeded it passes the deployment input through
// as url and revision.
func readOutputs(resource string, tpl Template, live *unstructured.Unstructured, deployment *stamp.Source) (map[string]any, error) {
	if tpl.Deployment == nil {
		return stamp.ReadOutputs(live, tpl.Outputs)
	}
	if verdict := stamp.DeploymentSucceeded(tpl.Deployment, live, resource); verdict != nil {
		return nil, &pendingError{*verdict}
	}
	if deployment == nil {
		return nil, &pendingError{Submitted(metav1.ConditionUnknown, v1alpha1.ReasonMissingValueAtPath,
			"waiting for input [deployment] from resource [%s]", resource)}
	}
	return map[string]any{v1alpha1.OutputURL: deployment.URL, v1alpha1.OutputRevision: deployment.Revision}, nil
}

// IsSecret says whether a stamped object is a core Secret, whose data must never reach
// status.
func IsSecret(obj *unstructured.Unstructured) bool {
	gvk := obj.GroupVersionKind()
	return gvk.Group == "" && gvk.Kind == "Secret"
}

// redactMessages keeps a stamped Secret's data out of status: the messages of its health
// and rule conditions can quote field values (matchFields, messagePath,
// messageExpression), so they are replaced.
func redactMessages(healthy *metav1.Condition, rules []metav1.Condition) {
	const redacted = "message redacted: the stamped object is a Secret"
	if healthy.Message != "" {
		healthy.Message = redacted
	}
	for i := range rules {
		if rules[i].Message != "" {
			rules[i].Message = redacted
		}
	}
}
