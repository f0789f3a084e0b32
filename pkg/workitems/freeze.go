package workitems

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// IsComplete reports whether conditions hold Complete=True. A resource whose last status says so
// is frozen (DESIGN §5): the realizer neither applies nor re-evaluates it, and keeps its conditions.
func IsComplete(conditions []metav1.Condition) bool {
	return meta.IsStatusConditionTrue(conditions, v1alpha1.ConditionComplete)
}

// Freeze returns current with the Complete verdict of previous kept: when previous holds
// Complete=True, that condition replaces current's Complete as it was (LastTransitionTime,
// ObservedGeneration and message included), or is appended when current has none. Otherwise current
// is returned as it is. Freeze copies; it changes neither slice.
//
// The verdict is final, whatever the object looks like now: a Job that was Complete stays
// Complete when it is deleted (current is Unknown NoStampedObject), when a later reconcile sees
// different conditions, or when the template's rules change. The realizer does not re-evaluate a
// frozen resource at all; Freeze is the guarantee for the evaluations that still happen, such as
// the one in the reconcile that first sees the verdict and the check before an apply.
func Freeze(previous, current []metav1.Condition) []metav1.Condition {
	prev := meta.FindStatusCondition(previous, v1alpha1.ConditionComplete)
	out := append([]metav1.Condition(nil), current...)
	if prev == nil || prev.Status != metav1.ConditionTrue {
		return out
	}
	for i := range out {
		if out[i].Type == v1alpha1.ConditionComplete {
			out[i] = *prev
			return out
		}
	}
	return append(out, *prev)
}
