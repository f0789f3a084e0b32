package workitems

import (
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// ResourceConditions is one resource's rule conditions as the owner aggregation sees them.
type ResourceConditions struct {
	// Name is the resource's name in the blueprint, e.g. run-tests.
	Name string
	// Conditions are the resource's conditions; other conditions than its rule conditions (such as
	// Healthy) may be present and are ignored. For a frozen resource, pass its kept conditions.
	Conditions []metav1.Condition
	// RuleTypes are the condition types the resource's rules set: the types of the conditions
	// Evaluate returned for it. A type listed here whose condition is missing from Conditions
	// counts as not True.
	RuleTypes []string
}

// OwnerConditions derives the owner's rule conditions: one per condition type in RuleTypes, in the
// order the types are first seen (resources in order, then each one's RuleTypes in order). Each
// is the AND over the resources that have a rule for that type:
//
//   - every such resource's condition is True: True ConditionRulesPassed "All resources are <C>";
//   - otherwise (False, Unknown or missing): False ConditionRulesFailed "One or more resources is
//     not <C>".
//
// A resource without a rule for a type does not take part in it, so the owner is Complete when
// every resource with a Complete rule is (seed 000). It never sets LastTransitionTime or
// ObservedGeneration.
func OwnerConditions(resources []ResourceConditions) []metav1.Condition {
	var order []string
	for _, r := range resources {
		for _, t := range r.RuleTypes {
			if t != "" && !slices.Contains(order, t) {
				order = append(order, t)
			}
		}
	}
	out := make([]metav1.Condition, 0, len(order))
	for _, t := range order {
		all := true
		for _, r := range resources {
			if slices.Contains(r.RuleTypes, t) && !meta.IsStatusConditionTrue(r.Conditions, t) {
				all = false
				break
			}
		}
		c := metav1.Condition{Type: t, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonConditionRulesPassed,
			Message: "All resources are " + t}
		if !all {
			c.Status, c.Reason, c.Message = metav1.ConditionFalse, v1alpha1.ReasonConditionRulesFailed,
				"One or more resources is not "+t
		}
		out = append(out, c)
	}
	return out
}
