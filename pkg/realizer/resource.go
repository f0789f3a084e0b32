package realizer

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/surveyor-dev/surveyor/internal/events"
	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/render"
	"github.com/surveyor-dev/surveyor/pkg/render/stamp"
	"github.com/surveyor-dev/surveyor/pkg/workitems"
)

// realization is one pass over an owner's blueprint: the pure pipeline (render.Pass) with
// the cluster around it.
type realization struct {
	r     *OwnerReconciler
	ctx   context.Context
	owner v1alpha1.Owner
	pass  *render.Pass
	bp    *render.Blueprint
	// writer writes as the owner's ServiceAccount; a kind still syncing drops the pass.
	writer

	prev []v1alpha1.ResourceStatus
	// pending are the owner's pending deletions before this pass (status.pendingDeletions).
	pending []v1alpha1.PendingDeletion
	// finished is set once the owner is Complete: nothing is applied any more.
	finished bool
	// events are what this reconcile changed, recorded once it is done.
	events events.Log
	// retention joins the deletes beyond a retention policy that failed in this pass: the
	// next pass lists those objects again, and the owner is re-queued with backoff for it.
	retention error
}

func (rz *realization) previous(name string) *v1alpha1.ResourceStatus {
	for i := range rz.prev {
		if rz.prev[i].Name == name {
			return &rz.prev[i]
		}
	}
	return nil
}

// realize stamps, applies and judges one resource. The result always says what
// happened in its conditions; an error is returned as well when a retry may fix it
// (an API failure), so the caller writes the status and then backs off.
func (rz *realization) realize(res *v1alpha1.BlueprintResource) (*render.Result, error) {
	prev := rz.previous(res.Name)
	if rz.finished || (prev != nil && workitems.IsComplete(prev.Conditions)) {
		return rz.observeOnly(res, prev), nil
	}
	out, err := rz.pass.Stamp(res, prev)
	switch {
	case out.PassThrough:
		out.Status.Outputs = rz.outputs(res.Name, out.Read, out.Secret)
		return out, nil
	case out.Object == nil:
		return rz.stale(out), err
	}
	live, cond, err := rz.apply(res, out.Template, out.Object)
	if cond != nil {
		// The API server's rejection can quote any field of the object (DESIGN §12).
		texts := render.SecretTexts(out.SecretInputs, out.Object)
		cond.Message = render.Redact(cond.Message, texts)
		out.Submitted = *cond
		return rz.stale(out), render.RedactError(err, texts)
	}
	out.Status.StampedRef = rz.stampedRef(live)
	out.Submitted = render.Submitted(metav1.ConditionTrue, v1alpha1.ReasonResourceSubmissionComplete, "")
	rz.observe(out, live)
	return out, nil
}

// stale judges a resource that got no new object this time: the object stamped before, if
// any, is still there and still judged, by its own template when this pass did not get as
// far as reading one.
func (rz *realization) stale(out *render.Result) *render.Result {
	if out.Healthy.Type != "" {
		return out // judged already: nothing stamped before is the resource's
	}
	tpl := out.Template
	if ref := out.Status.TemplateRef; tpl.Spec == nil && ref != nil {
		if obj, err := rz.template(ref.Kind, ref.Name); err == nil {
			tpl = render.TemplateOf(obj)
		}
	}
	var live *unstructured.Unstructured
	if tpl.Spec != nil && out.Status.StampedRef != nil {
		live = rz.live(out.Status.StampedRef)
	}
	out.Healthy, out.Rules = out.JudgeStale(tpl, live)
	return out
}

// observe reads a live object's outputs and judges it, takes what it saw into out, and
// reports the outputs in its status.
func (rz *realization) observe(out *render.Result, live *unstructured.Unstructured) {
	seen := out.Observe(live)
	out.Healthy, out.Rules, out.Secret = seen.Healthy, seen.Rules, seen.Secret
	if seen.Submitted != nil {
		out.Submitted = *seen.Submitted
		return
	}
	out.Read, out.Values, out.Held = seen.Read, seen.Values, seen.Held
	out.Status.Outputs = rz.outputs(out.Status.Name, out.Read, out.Secret)
}

// observeOnly handles a resource that must not be applied: it completed, or its
// owner did. Its object is never updated or recreated, but while it exists its
// health, rules and outputs are still read from it, with Complete kept True (a
// verdict never flips). Without an object, or its template, everything stays as it
// was last reported.
func (rz *realization) observeOnly(res *v1alpha1.BlueprintResource, prev *v1alpha1.ResourceStatus) *render.Result {
	if prev == nil {
		return render.Unobserved(rz.r.kind, res.Name, rz.owner.GetGeneration())
	}
	was := meta.FindStatusCondition(prev.Conditions, v1alpha1.ConditionResourceSubmitted)
	if prev.StampedRef == nil || prev.TemplateRef == nil || was == nil {
		return frozen(prev)
	}
	tplObj, err := rz.template(res.TemplateRef.Kind, prev.TemplateRef.Name)
	if err != nil {
		return frozen(prev)
	}
	live := rz.live(prev.StampedRef)
	if live == nil {
		return frozen(prev)
	}
	out := &render.Result{Status: *prev.DeepCopy(), Template: render.TemplateOf(tplObj)}
	out.Status.Conditions, out.Status.Outputs = nil, prev.Outputs
	out.Status.ObservedGeneration = rz.owner.GetGeneration() // finished, not stale
	out.Submitted = *was
	if values, ok := stamp.OutputValues(prev.Outputs); ok && values[v1alpha1.OutputURL] != nil {
		out.Inputs.Deployment = &stamp.Source{URL: values[v1alpha1.OutputURL], Revision: values[v1alpha1.OutputRevision]}
	}
	rz.observe(out, live)
	out.Rules = workitems.Freeze(prev.Conditions, out.Rules)
	return out
}

// frozen is a resource that completed: it is never stamped again, its conditions stay
// as they were, and its outputs still feed later resources, decoded from the status.
func frozen(prev *v1alpha1.ResourceStatus) *render.Result {
	out := &render.Result{Status: *prev.DeepCopy(), Frozen: true}
	for _, c := range prev.Conditions {
		switch c.Type {
		case v1alpha1.ConditionResourceSubmitted:
			out.Submitted = c
		case v1alpha1.ConditionHealthy:
			out.Healthy = c
		case v1alpha1.ConditionReady:
		default:
			out.Rules = append(out.Rules, c)
		}
	}
	if values, ok := stamp.OutputValues(prev.Outputs); ok {
		out.Values = values
	}
	return out
}

// healthEvent records ResourceHealthyStatusChanged when a resource's health status
// differs from the last one written. The first judgement is not a transition: it
// is in the status already, and an event per new resource would double the
// requests a new owner costs.
func (rz *realization) healthEvent(res *render.Result) {
	prev := rz.previous(res.Status.Name)
	if prev == nil {
		return
	}
	c := meta.FindStatusCondition(prev.Conditions, v1alpha1.ConditionHealthy)
	if c == nil {
		return
	}
	if was := c.Status; was != res.Healthy.Status {
		rz.events.Add(v1alpha1.EventResourceHealthyStatusChanged, "Resource [%s] health changed from %s to %s: %s %s",
			res.Status.Name, was, res.Healthy.Status, res.Healthy.Reason, res.Healthy.Message)
	}
}
