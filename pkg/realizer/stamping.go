package realizer

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/expr"
	"github.com/surveyor-dev/surveyor/pkg/health"
	"github.com/surveyor-dev/surveyor/pkg/realizer/selector"
	"github.com/surveyor-dev/surveyor/pkg/realizer/stamp"
)

// selectBlueprint picks the owner's blueprint and says so as the kind's blueprint
// condition (SupplyChainReady or DeliveryReady): True Ready, the selection failure, or
// the chosen blueprint's own not-Ready reason.
func selectBlueprint(kind *ownerKind, owner map[string]any, blueprints []*blueprint) (*blueprint, metav1.Condition) {
	candidates := make([]selector.Candidate, len(blueprints))
	for i, bp := range blueprints {
		candidates[i] = selector.Candidate{Name: bp.name, Selector: bp.selector}
	}
	sel := selector.Select(kind.terms, selector.NewOwner(owner), candidates)
	cond := metav1.Condition{Type: kind.blueprintReady, Status: metav1.ConditionFalse, Reason: sel.Reason, Message: sel.Message}
	if sel.Reason == kind.terms.NotFound && len(sel.Errors) > 0 {
		// A blueprint whose selector cannot be evaluated was skipped; it may be the one
		// meant for this owner, so say which and why.
		msgs := make([]string, len(sel.Errors))
		for i, err := range sel.Errors {
			msgs[i] = err.Error()
		}
		cond.Message += fmt.Sprintf("; skipped %s with invalid selectors: %s", kind.terms.Blueprints, strings.Join(msgs, "; "))
	}
	i := slices.IndexFunc(blueprints, func(bp *blueprint) bool { return bp.name == sel.Name })
	if sel.Name == "" || i < 0 {
		return nil, cond
	}
	bp := blueprints[i]
	// A blueprint whose status is stale (a newer spec not yet checked) or not Ready
	// lends its reason; realizing waits until its templates are there.
	ready := meta.FindStatusCondition(bp.status.Conditions, v1alpha1.ConditionReady)
	switch {
	case ready == nil || bp.status.ObservedGeneration != bp.generation:
		cond.Status, cond.Reason = metav1.ConditionUnknown, kind.blueprint.notReconciled
		cond.Message = fmt.Sprintf("waiting for %s [%s] to be reconciled", kind.terms.Blueprint, bp.name)
	case ready.Status != metav1.ConditionTrue:
		cond.Status, cond.Reason, cond.Message = ready.Status, ready.Reason, ready.Message
	default:
		cond.Status, cond.Reason, cond.Message = metav1.ConditionTrue, v1alpha1.ReasonReady, ""
	}
	return bp, cond
}

// chooseOption resolves a templateRef's options for the owner.
func chooseOption(kind *ownerKind, res *resourceSpec, owner map[string]any) (selector.Choice, *metav1.Condition) {
	choice, err := selector.ChooseOption(kind.terms, selector.NewOwner(owner), res.options)
	if err == nil {
		return choice, nil
	}
	reason := v1alpha1.ReasonResolveTemplateOptionsError
	var none *selector.OptionsMatchError
	if errors.As(err, &none) {
		reason = v1alpha1.ReasonTemplateOptionsMatchError
	}
	c := submitted(metav1.ConditionFalse, reason, "unable to choose a template for resource [%s]: %v", res.name, err)
	return choice, &c
}

// judge is the resource's Healthy condition.
func judge(obj *unstructured.Unstructured, tpl template, outputsRead bool, scope *expr.Scope) metav1.Condition {
	in := health.Input{Object: obj, HasOutputs: len(tpl.outputs) > 0 || tpl.deployment != nil, OutputsRead: outputsRead, Scope: scope}
	if tpl.spec != nil {
		in.Rule, in.Field = health.RuleOf(tpl.spec)
	}
	return health.Evaluate(in)
}

// missingValue is ResourceSubmitted for an output that cannot be read yet, worded by
// what the object's health says about why (DESIGN §3.6).
func missingValue(err error, obj *unstructured.Unstructured, healthy metav1.Condition) metav1.Condition {
	path := err.Error()
	var oe *stamp.OutputError
	if errors.As(err, &oe) {
		path = oe.Path
	}
	ref := fmt.Sprintf("%s/%s", obj.GetKind(), obj.GetName())
	switch healthy.Status {
	case metav1.ConditionTrue:
		return submitted(metav1.ConditionUnknown, v1alpha1.ReasonMissingValueAtPath,
			"cannot read value [%s] from healthy object [%s], contact Platform Eng", path, ref)
	case metav1.ConditionFalse:
		return submitted(metav1.ConditionUnknown, v1alpha1.ReasonMissingValueAtPath,
			"cannot read value [%s] from unhealthy object [%s], examine object, particularly whether it is receiving proper inputs", path, ref)
	}
	return submitted(metav1.ConditionUnknown, v1alpha1.ReasonMissingValueAtPath, "waiting to read value [%s] from object [%s]", path, ref)
}

// redactedPreview replaces the preview of an output read from a Secret.
const redactedPreview = redactedValue

// isSecret says whether a stamped object is a core Secret, whose data must never
// reach status.
func isSecret(obj *unstructured.Unstructured) bool {
	gvk := obj.GroupVersionKind()
	return gvk.Group == "" && gvk.Kind == "Secret"
}

// outputs turns read values into status outputs, keeping each one's transition time
// while its digest is unchanged, and records ResourceOutputChanged when it moved.
// Outputs read from a Secret are digested with the controller's key and their preview is
// redactedPreview, so status and events never carry secret data, nor a digest that could be
// brute-forced.
func (rz *realization) outputs(name string, values map[string]any, secret bool) []v1alpha1.Output {
	var previous []v1alpha1.Output
	if prev := rz.previous(name); prev != nil {
		previous = prev.Outputs
	}
	digest := stamp.PlainDigest
	if secret {
		digest = rz.r.secretDigest
	}
	outs, err := stamp.StatusOutputs(values, previous, rz.r.now(), digest)
	if err != nil {
		return previous
	}
	if secret {
		for i := range outs {
			outs[i].Preview = redactedPreview
		}
	}
	// Only a change is an event: the first read of an output is in the status already.
	for _, o := range outs {
		i := slices.IndexFunc(previous, func(p v1alpha1.Output) bool { return p.Name == o.Name })
		if i >= 0 && previous[i].Digest != o.Digest {
			rz.events.add(v1alpha1.EventResourceOutputChanged, "Output [%s] of resource [%s] changed to %s", o.Name, name, o.Digest)
		}
	}
	return outs
}
