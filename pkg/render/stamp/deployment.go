package stamp

import (
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/expr"
)

// DeploymentSucceeded judges whether the object stamped from a ClusterDeploymentTemplate has
// succeeded, by its observedMatches or its observedCompletion (DESIGN §8). It returns nil on
// success; otherwise the resource's ResourceSubmitted condition saying why not: Unknown
// ConditionNotMet while it may still succeed, False FailedConditionMet when it failed, False
// TemplateStampFailure when the object can never satisfy observedCompletion. resource names the
// blueprint resource in messages.
func DeploymentSucceeded(spec *v1alpha1.ClusterDeploymentTemplateSpec, obj *unstructured.Unstructured, resource string) *metav1.Condition {
	if spec.ObservedCompletion != nil {
		return observedCompletion(spec.ObservedCompletion, obj, resource)
	}
	for _, m := range spec.ObservedMatches {
		in, err := expr.Get(m.Input, obj.Object)
		if err != nil {
			return notMet("could not find value on input [%s]: %v", m.Input, err)
		}
		out, err := expr.Get(m.Output, obj.Object)
		if err != nil {
			return notMet("could not find value on output [%s]: %v", m.Output, err)
		}
		if !sameValue(in, out) {
			return notMet("input [%s] and output [%s] do not match: %s != %s", m.Input, m.Output, expr.ValueString(in), expr.ValueString(out))
		}
	}
	return nil
}

func observedCompletion(c *v1alpha1.ObservedCompletion, obj *unstructured.Unstructured, resource string) *metav1.Condition {
	observed, found, err := unstructured.NestedFieldNoCopy(obj.Object, "status", "observedGeneration")
	generation, isInt := observed.(int64)
	if err != nil || !found || !isInt {
		return &metav1.Condition{
			Type: v1alpha1.ConditionResourceSubmitted, Status: metav1.ConditionFalse, Reason: v1alpha1.ReasonTemplateStampFailure,
			Message: fmt.Sprintf("resource [%s] cannot satisfy observedCompletion without observedGeneration in object status", resource),
		}
	}
	if generation != obj.GetGeneration() {
		return notMet("status.observedGeneration does not equal metadata.generation: %d != %d", generation, obj.GetGeneration())
	}
	if f := c.Failed; f != nil {
		if v, err := expr.Get(f.Key, obj.Object); err == nil && expr.ValueString(v) == f.Value {
			return &metav1.Condition{
				Type: v1alpha1.ConditionResourceSubmitted, Status: metav1.ConditionFalse, Reason: v1alpha1.ReasonFailedConditionMet,
				Message: fmt.Sprintf("deployment failure condition [%s] was: %s", f.Key, expr.ValueString(v)),
			}
		}
	}
	v, err := expr.Get(c.Succeeded.Key, obj.Object)
	if err != nil {
		return notMet("deployment success condition [%s] was not found: %v", c.Succeeded.Key, err)
	}
	if got := expr.ValueString(v); got != c.Succeeded.Value {
		return notMet("deployment success condition [%s] was: %s, expected: %s", c.Succeeded.Key, got, c.Succeeded.Value)
	}
	return nil
}

func notMet(format string, args ...any) *metav1.Condition {
	return &metav1.Condition{
		Type: v1alpha1.ConditionResourceSubmitted, Status: metav1.ConditionUnknown, Reason: v1alpha1.ReasonConditionNotMet,
		Message: fmt.Sprintf(format, args...),
	}
}

// sameValue compares two values read from an object by their JSON encodings, so maps and lists
// compare by content (never panicking) and 1 equals 1.0.
func sameValue(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(ja) == string(jb)
}
