package realizer

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/expr"
	"github.com/surveyor-dev/surveyor/pkg/realizer/stamp"
	"github.com/surveyor-dev/surveyor/pkg/workitems"
)

// realization is one pass over an owner's blueprint.
type realization struct {
	r      *OwnerReconciler
	ctx    context.Context
	owner  v1alpha1.Owner
	object map[string]any // the owner, as templates and selectors read it
	bp     *blueprint
	client client.Client // impersonates the owner's ServiceAccount

	prev   []v1alpha1.ResourceStatus
	byName map[string]*resourceResult
	// finished is set once the owner is Complete: nothing is applied any more.
	finished bool
	// syncing is set when a kind the owner needs has not synced yet: the pass is dropped.
	syncing bool
	// events are what this reconcile changed, recorded once it is done.
	events eventLog
}

// resourceResult is what was observed for one resource.
type resourceResult struct {
	status    v1alpha1.ResourceStatus // without conditions, unless frozen
	submitted metav1.Condition
	healthy   metav1.Condition
	// frozen marks a completed resource: status (conditions included) is kept as is.
	frozen bool
	// rules are the conditions of the template's conditionRules, e.g. Complete.
	rules []metav1.Condition
	// values are the outputs read (url, revision, image or config); nil until
	// every declared output could be read.
	values map[string]any
	// secret marks values read from a Secret (or passed through from one), or stamped
	// from such values.
	secret bool
	// secretInputs are the values of the Secret-derived inputs this resource was stamped
	// from: a message about its object (an API server's rejection) must not quote them.
	secretInputs []any
	// immutable marks a resource whose template stamps a new object per change.
	immutable bool
	// passThrough marks a resource that forwarded an input: it has no object, so no Healthy.
	passThrough bool
	// held says why a submitted resource's outputs are held back from later resources
	// (an immutable object that is not healthy yet); empty otherwise.
	held string
}

func (rz *realization) previous(name string) *v1alpha1.ResourceStatus {
	for i := range rz.prev {
		if rz.prev[i].Name == name {
			return &rz.prev[i]
		}
	}
	return nil
}

func submitted(status metav1.ConditionStatus, reason, format string, args ...any) metav1.Condition {
	return metav1.Condition{Type: v1alpha1.ConditionResourceSubmitted, Status: status, Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// templateMissing is ResourceSubmitted for a template that could not be read because
// it does not exist (or its kind is none), or nil for any other err.
func templateMissing(kind, name string, err error) *metav1.Condition {
	var c metav1.Condition
	switch {
	case errors.Is(err, errUnknownTemplateKind):
		c = submitted(metav1.ConditionFalse, v1alpha1.ReasonTemplateObjectRetrievalFailure, "unable to get template [%s/%s]: %v", kind, name, err)
	case apierrors.IsNotFound(err):
		c = submitted(metav1.ConditionFalse, v1alpha1.ReasonTemplateObjectRetrievalFailure, "unable to get template [%s/%s]: not found", kind, name)
	default:
		return nil
	}
	return &c
}

// unusable is ResourceSubmitted for a template whose rules cannot be used, or nil.
func unusable(tpl template) *metav1.Condition {
	problem := ruleProblem(tpl.spec)
	if problem == nil {
		return nil
	}
	c := submitted(metav1.ConditionFalse, problem.Reason, "template [%s/%s] cannot be used: %s", tpl.kind, tpl.name, problem.Message)
	return &c
}

// stampFailure is ResourceSubmitted for a template that could not be stamped.
func stampFailure(res *resourceSpec, tpl template, err error) metav1.Condition {
	return submitted(metav1.ConditionFalse, v1alpha1.ReasonTemplateStampFailure, "unable to stamp object for resource [%s] from template [%s/%s]: %v", res.name, tpl.kind, tpl.name, err)
}

// realize stamps, applies and judges one resource. The result always says what
// happened in its conditions; an error is returned as well when a retry may fix it
// (an API failure), so the caller writes the status and then backs off.
func (rz *realization) realize(res *resourceSpec) (*resourceResult, error) {
	prev := rz.previous(res.name)
	if rz.finished || (prev != nil && workitems.IsComplete(prev.Conditions)) {
		return rz.observeOnly(res, prev), nil
	}
	out := &resourceResult{status: v1alpha1.ResourceStatus{Name: res.name, ObservedGeneration: rz.owner.GetGeneration()}}
	if prev != nil {
		// Until a new object is stamped, the old one (and the template it came from)
		// is still this resource's.
		out.status.StampedRef, out.status.TemplateRef = prev.StampedRef, prev.TemplateRef
	}
	var tpl template // known once the template is read
	retry := func(c metav1.Condition, err error) (*resourceResult, error) {
		out.submitted = c
		// The object stamped before, if any, is still there and still judged, by its
		// own template when this pass did not get as far as reading one.
		if ref := out.status.TemplateRef; tpl.spec == nil && ref != nil {
			if obj, err := rz.template(ref.Kind, ref.Name); err == nil {
				tpl = templateOf(obj)
			}
		}
		var live *unstructured.Unstructured
		if tpl.spec != nil && out.status.StampedRef != nil {
			live = rz.live(out.status.StampedRef)
		}
		out.healthy = judge(live, tpl, false, nil)
		if tpl.spec != nil {
			out.rules = workitems.Evaluate(tpl.spec.ConditionRules, live, nil)
		}
		if out.secret || (live != nil && isSecret(live)) {
			redactMessages(&out.healthy, out.rules)
		}
		return out, err
	}
	fail := func(c metav1.Condition) (*resourceResult, error) { return retry(c, nil) }

	inputs, waiting := inputsOf(rz.r.kind, rz.byName, res, out)
	if waiting != nil {
		return fail(*waiting)
	}

	name := res.templateName
	if name == "" {
		choice, err := chooseOption(rz.r.kind, res, rz.object)
		if err != nil {
			return fail(*err)
		}
		if choice.PassThrough != "" {
			return rz.passThrough(res, choice.PassThrough, out)
		}
		name = choice.Template
	}
	out.status.TemplateRef = &v1alpha1.TemplateReference{APIVersion: v1alpha1.GroupVersion.String(), Kind: res.templateKind, Name: name}

	tplObj, err := rz.template(res.templateKind, name)
	if c := templateMissing(res.templateKind, name, err); c != nil {
		return fail(*c)
	}
	if err != nil {
		return retry(submitted(metav1.ConditionUnknown, v1alpha1.ReasonTemplateObjectRetrievalFailure, "unable to get template [%s/%s]: %v", res.templateKind, name, err), err)
	}
	tpl = templateOf(tplObj)
	if c := unusable(tpl); c != nil {
		return fail(*c)
	}

	obj, err := rz.stamp(res, tpl, inputs)
	if err != nil {
		// A template's error (ytt's above all) can quote the inputs it was given.
		c := stampFailure(res, tpl, err)
		c.Message = redact(c.Message, secretTexts(out.secretInputs, nil))
		return fail(c)
	}

	out.immutable = tpl.spec.IsImmutable()
	live, cond, err := rz.apply(res, tpl, obj)
	if cond != nil {
		// The API server's rejection can quote any field of the object (DESIGN §12).
		texts := secretTexts(out.secretInputs, obj)
		cond.Message = redact(cond.Message, texts)
		return retry(*cond, redactError(err, texts))
	}
	out.status.StampedRef = rz.stampedRef(live)
	out.submitted = submitted(metav1.ConditionTrue, v1alpha1.ReasonResourceSubmissionComplete, "")
	rz.judgeLive(out, tpl, live, inputs.Deployment)
	return out, nil
}

// judgeLive reads a live object's outputs and judges its health and rules into out.
// An output that cannot be read turns ResourceSubmitted into MissingValueAtPath; a
// deployment that has not succeeded, into its verdict. deployment is the resource's
// deployment input, which a ClusterDeploymentTemplate passes through as its outputs.
func (rz *realization) judgeLive(out *resourceResult, tpl template, live *unstructured.Unstructured, deployment *stamp.Source) {
	values, err := readOutputs(out.status.Name, tpl, live, deployment)
	scope := expr.NewScope(live.Object) // one CEL budget for the object's health and rules
	out.healthy = judge(live, tpl, err == nil, scope)
	out.rules = workitems.Evaluate(tpl.spec.ConditionRules, live, scope)
	out.secret = out.secret || isSecret(live)
	if out.secret {
		redactMessages(&out.healthy, out.rules)
	}
	if c := outputProblem(tpl, live, err, out.healthy); c != nil {
		out.submitted = *c
		return
	}
	out.status.Outputs = rz.outputs(out.status.Name, values, out.secret)
	out.values = values
	if out.held = heldBack(tpl, live, out.healthy); out.held != "" {
		out.values = nil
	}
}

// outputProblem is ResourceSubmitted when the outputs of a live object could not be read
// (err from readOutputs), worded by its health; nil when they were.
func outputProblem(tpl template, live *unstructured.Unstructured, err error, healthy metav1.Condition) *metav1.Condition {
	var syntax *expr.SyntaxError
	var pending *pendingError
	var c metav1.Condition
	switch {
	case err == nil:
		return nil
	case errors.As(err, &syntax):
		c = submitted(metav1.ConditionFalse, v1alpha1.ReasonTemplateStampFailure,
			"template [%s/%s] has an invalid output path: %v", tpl.kind, tpl.name, err)
	case errors.As(err, &pending):
		c = pending.condition
	default:
		c = missingValue(err, live, healthy)
	}
	return &c
}

// heldBack says why the outputs of a live object are held back from later resources, or
// "": later resources are stamped from an immutable object only once it is healthy (a run
// that succeeded).
func heldBack(tpl template, live *unstructured.Unstructured, healthy metav1.Condition) string {
	if !tpl.spec.IsImmutable() || healthy.Status == metav1.ConditionTrue {
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
func readOutputs(resource string, tpl template, live *unstructured.Unstructured, deployment *stamp.Source) (map[string]any, error) {
	if tpl.deployment == nil {
		return stamp.ReadOutputs(live, tpl.outputs)
	}
	if verdict := stamp.DeploymentSucceeded(tpl.deployment, live, resource); verdict != nil {
		return nil, &pendingError{*verdict}
	}
	if deployment == nil {
		return nil, &pendingError{submitted(metav1.ConditionUnknown, v1alpha1.ReasonMissingValueAtPath,
			"waiting for input [deployment] from resource [%s]", resource)}
	}
	return map[string]any{stamp.OutputURL: deployment.URL, stamp.OutputRevision: deployment.Revision}, nil
}

// observeOnly handles a resource that must not be applied: it completed, or its
// owner did. Its object is never updated or recreated, but while it exists its
// health, rules and outputs are still read from it, with Complete kept True (a
// verdict never flips). Without an object, or its template, everything stays as it
// was last reported.
func (rz *realization) observeOnly(res *resourceSpec, prev *v1alpha1.ResourceStatus) *resourceResult {
	if prev == nil {
		return &resourceResult{
			status:    v1alpha1.ResourceStatus{Name: res.name, ObservedGeneration: rz.owner.GetGeneration()},
			submitted: submitted(metav1.ConditionUnknown, rz.r.kind.completeReason, "the %s completed before this resource was stamped", rz.r.kind.name),
			healthy:   judge(nil, template{}, false, nil),
		}
	}
	was := meta.FindStatusCondition(prev.Conditions, v1alpha1.ConditionResourceSubmitted)
	if prev.StampedRef == nil || prev.TemplateRef == nil || was == nil {
		return frozen(prev)
	}
	tplObj, err := rz.template(res.templateKind, prev.TemplateRef.Name)
	if err != nil {
		return frozen(prev)
	}
	live := rz.live(prev.StampedRef)
	if live == nil {
		return frozen(prev)
	}
	out := &resourceResult{status: *prev.DeepCopy()}
	out.status.Conditions, out.status.Outputs = nil, prev.Outputs
	out.status.ObservedGeneration = rz.owner.GetGeneration() // finished, not stale
	out.submitted = *was
	var deployment *stamp.Source
	if values, ok := stamp.OutputValues(prev.Outputs); ok && values[stamp.OutputURL] != nil {
		deployment = &stamp.Source{URL: values[stamp.OutputURL], Revision: values[stamp.OutputRevision]}
	}
	rz.judgeLive(out, templateOf(tplObj), live, deployment)
	out.rules = workitems.Freeze(prev.Conditions, out.rules)
	return out
}

// inputsOf gathers the outputs of the earlier resources (byName) this one consumes, in
// the order sources, images, deployment, configs, and names them in out's status. A
// producer that has not delivered yet makes this resource wait, carrying the producer's
// reason.
func inputsOf(kind *ownerKind, byName map[string]*resourceResult, res *resourceSpec, out *resourceResult) (stamp.Inputs, *metav1.Condition) {
	in := stamp.Inputs{Sources: map[string]stamp.Source{}, Images: map[string]any{}, Configs: map[string]any{}}
	var deployment []v1alpha1.ResourceReference
	if res.deployment != nil {
		// The deployment goes by "deployment" in the context and in messages.
		deployment = []v1alpha1.ResourceReference{{Name: "deployment", Resource: res.deployment.Resource}}
	}
	groups := []struct {
		refs  []v1alpha1.ResourceReference
		names []string
		set   func(name string, values map[string]any)
	}{
		{res.sources, []string{stamp.OutputURL, stamp.OutputRevision}, func(n string, v map[string]any) {
			in.Sources[n] = stamp.Source{URL: v[stamp.OutputURL], Revision: v[stamp.OutputRevision]}
		}},
		{res.images, []string{stamp.OutputImage}, func(n string, v map[string]any) { in.Images[n] = v[stamp.OutputImage] }},
		{deployment, []string{stamp.OutputURL, stamp.OutputRevision}, func(_ string, v map[string]any) {
			in.Deployment = &stamp.Source{URL: v[stamp.OutputURL], Revision: v[stamp.OutputRevision]}
		}},
		{res.configs, []string{stamp.OutputConfig}, func(n string, v map[string]any) { in.Configs[n] = v[stamp.OutputConfig] }},
	}
	for _, g := range groups {
		for _, ref := range g.refs {
			out.status.Inputs = append(out.status.Inputs, v1alpha1.Input{Name: ref.Resource})
			producer, ok := byName[ref.Resource]
			if ok && producer.secret {
				// A value derived from a Secret is as secret as the Secret.
				out.secret = true
				out.secretInputs = append(out.secretInputs, producer.values)
			}
			if !ok {
				c := submitted(metav1.ConditionFalse, v1alpha1.ReasonTemplateStampFailure,
					"input [%s] of resource [%s] refers to resource [%s], which is not an earlier resource of the %s", ref.Name, res.name, ref.Resource, kind.terms.Blueprint)
				return in, &c
			}
			if producer.values == nil {
				c := producer.submitted
				if c.Status == metav1.ConditionTrue {
					c.Status, c.Reason = metav1.ConditionUnknown, v1alpha1.ReasonMissingValueAtPath
				}
				if c.Status == metav1.ConditionFalse {
					c.Status = metav1.ConditionUnknown
				}
				why := producer.submitted.Message
				if producer.held != "" {
					why = producer.held
				}
				c.Message = fmt.Sprintf("waiting for input [%s] from resource [%s]: %s", ref.Name, ref.Resource, why)
				return in, &c
			}
			for _, n := range g.names {
				if _, ok := producer.values[n]; !ok {
					c := submitted(metav1.ConditionFalse, v1alpha1.ReasonTemplateStampFailure,
						"input [%s] of resource [%s]: resource [%s] has no %s output", ref.Name, res.name, ref.Resource, n)
					return in, &c
				}
			}
			g.set(ref.Name, producer.values)
		}
	}
	return in, nil
}

// redactMessages keeps a stamped Secret's data out of status: the messages of its
// health and rule conditions can quote field values (matchFields, messagePath,
// messageExpression), so they are replaced.
func redactMessages(healthy *metav1.Condition, rules []metav1.Condition) {
	const redacted = "message redacted: the stamped object is a Secret"
	for _, c := range append([]*metav1.Condition{healthy}, ptrs(rules)...) {
		if c.Message != "" {
			c.Message = redacted
		}
	}
}

func ptrs(cs []metav1.Condition) []*metav1.Condition {
	out := make([]*metav1.Condition, len(cs))
	for i := range cs {
		out[i] = &cs[i]
	}
	return out
}

// frozen is a resource that completed: it is never stamped again, its conditions stay
// as they were, and its outputs still feed later resources, decoded from the status.
func frozen(prev *v1alpha1.ResourceStatus) *resourceResult {
	out := &resourceResult{status: *prev.DeepCopy(), frozen: true}
	for _, c := range prev.Conditions {
		switch c.Type {
		case v1alpha1.ConditionResourceSubmitted:
			out.submitted = c
		case v1alpha1.ConditionHealthy:
			out.healthy = c
		case v1alpha1.ConditionReady:
		default:
			out.rules = append(out.rules, c)
		}
	}
	if values, ok := stamp.OutputValues(prev.Outputs); ok {
		out.values = values
	}
	return out
}

// passedThrough is the earlier resource (in byName) whose outputs a pass-through resource
// forwards as its input named input, or ResourceSubmitted saying that it has no such input.
func passedThrough(res *resourceSpec, input string, byName map[string]*resourceResult) (*resourceResult, *metav1.Condition) {
	var producer string
	for _, refs := range [][]v1alpha1.ResourceReference{res.sources, res.images, res.configs} {
		for _, ref := range refs {
			if ref.Name == input {
				producer = ref.Resource
			}
		}
	}
	p, ok := byName[producer]
	if !ok || p.values == nil {
		c := submitted(metav1.ConditionFalse, v1alpha1.ReasonTemplateStampFailure,
			"resource [%s] passes through input [%s], which is not among its inputs", res.name, input)
		return nil, &c
	}
	return p, nil
}

// passThrough forwards the named input's outputs unchanged; nothing is stamped.
func (rz *realization) passThrough(res *resourceSpec, input string, out *resourceResult) (*resourceResult, error) {
	p, c := passedThrough(res, input, rz.byName)
	if c != nil {
		out.submitted = *c
		out.healthy = judge(nil, template{}, false, nil)
		return out, nil
	}
	out.status.StampedRef, out.status.TemplateRef = nil, nil
	out.passThrough = true
	out.values, out.secret = p.values, p.secret
	out.status.Outputs = rz.outputs(res.name, p.values, p.secret)
	out.submitted = submitted(metav1.ConditionTrue, v1alpha1.ReasonPassThrough, "")
	out.healthy = metav1.Condition{Type: v1alpha1.ConditionHealthy, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonOutputsAvailable}
	return out, nil
}

// healthEvent records ResourceHealthyStatusChanged when a resource's health status
// differs from the last one written. The first judgement is not a transition: it
// is in the status already, and an event per new resource would double the
// requests a new owner costs.
func (rz *realization) healthEvent(res *resourceResult) {
	prev := rz.previous(res.status.Name)
	if prev == nil {
		return
	}
	c := meta.FindStatusCondition(prev.Conditions, v1alpha1.ConditionHealthy)
	if c == nil {
		return
	}
	if was := c.Status; was != res.healthy.Status {
		rz.events.add(v1alpha1.EventResourceHealthyStatusChanged, "Resource [%s] health changed from %s to %s: %s %s",
			res.status.Name, was, res.healthy.Status, res.healthy.Reason, res.healthy.Message)
	}
}
