package view

import (
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// Owner is what every printer reads of a Workload or a Deliverable.
type Owner struct {
	// Kind is v1alpha1.KindWorkload or v1alpha1.KindDeliverable.
	Kind      string
	Namespace string
	Name      string
	// Generation is metadata.generation: the spec the status should speak about.
	Generation int64
	// Created is metadata.creationTimestamp.
	Created time.Time
	// Source is the git url or image the owner builds from, or its image.
	Source string
	// Blueprint is status.supplyChainRef or status.deliveryRef.
	Blueprint *v1alpha1.BlueprintReference
	Status    v1alpha1.OwnerStatus
}

// OwnerOf is the Owner of a Workload or a Deliverable.
func OwnerOf(o v1alpha1.Owner) Owner {
	out := Owner{
		Namespace: o.GetNamespace(), Name: o.GetName(), Generation: o.GetGeneration(),
		Created: o.GetCreationTimestamp().Time, Blueprint: o.GetBlueprintRef(), Status: *o.GetOwnerStatus(),
	}
	if k := v1alpha1.OwnerKindOf(o); k != nil {
		out.Kind = k.Kind
	}
	// Where the owner's code comes from is in fields of each kind's own spec.
	var source *v1alpha1.Source
	switch o := o.(type) {
	case *v1alpha1.Workload:
		source, out.Source = o.Spec.Source, o.Spec.Image
	case *v1alpha1.Deliverable:
		source = o.Spec.Source
	}
	switch {
	case source != nil && source.Git != nil && source.Git.URL != "":
		out.Source = source.Git.URL
	case source != nil && source.Image != "":
		out.Source = source.Image
	}
	return out
}

// Ref is how messages name the owner: Kind namespace/name.
func (o Owner) Ref() string { return o.Kind + " " + o.Namespace + "/" + o.Name }

// Condition is the owner condition of type t, or nil.
func (o Owner) Condition(t string) *metav1.Condition {
	return meta.FindStatusCondition(o.Status.Conditions, t)
}

// BlueprintCondition is SupplyChainReady (DeliveryReady for a Deliverable), or nil.
func (o Owner) BlueprintCondition() *metav1.Condition {
	if k := v1alpha1.OwnerKindNamed(o.Kind); k != nil {
		return o.Condition(k.BlueprintReady)
	}
	return nil
}

// BlueprintTerm names the owner's kind of blueprint: "supply chain" or "delivery".
func (o Owner) BlueprintTerm() string {
	if k := v1alpha1.OwnerKindNamed(o.Kind); k != nil {
		return k.Terms.Blueprint
	}
	return "blueprint"
}

// Observed reports whether the status speaks about the current generation: the
// controller has seen the latest spec.
func (o Owner) Observed() bool { return o.Status.ObservedGeneration >= o.Generation }

// ReadyNow reports whether the owner is Ready at its current generation, the only Ready
// that counts.
func (o Owner) ReadyNow() bool {
	c := o.Condition(v1alpha1.ConditionReady)
	return o.Observed() && c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == o.Generation
}

// ruleConditions are the conditions beyond those every owner or resource has, in order:
// those of the templates' conditionRules, such as Complete.
func ruleConditions(conds []metav1.Condition, fixed ...string) []metav1.Condition {
	var out []metav1.Condition
	for _, c := range conds {
		known := false
		for _, f := range fixed {
			known = known || c.Type == f
		}
		if !known {
			out = append(out, c)
		}
	}
	return out
}

// ownerRuleConditions are the owner's rule conditions (Complete and the like).
func (o Owner) ruleConditions() []metav1.Condition {
	return ruleConditions(o.Status.Conditions, v1alpha1.ConditionSupplyChainReady, v1alpha1.ConditionDeliveryReady,
		v1alpha1.ConditionResourcesSubmitted, v1alpha1.ConditionResourcesHealthy, v1alpha1.ConditionReady, v1alpha1.ConditionAvailable)
}

// resourceRuleConditions are a resource's rule conditions.
func resourceRuleConditions(r v1alpha1.ResourceStatus) []metav1.Condition {
	return ruleConditions(r.Conditions, v1alpha1.ConditionResourceSubmitted, v1alpha1.ConditionHealthy, v1alpha1.ConditionReady)
}

// deciding is the condition that explains why a resource is not Ready: the first False
// of ResourceSubmitted and Healthy, else the first Unknown, else Ready itself; nil when
// the resource has no conditions at all.
func deciding(r v1alpha1.ResourceStatus) *metav1.Condition {
	for _, want := range []metav1.ConditionStatus{metav1.ConditionFalse, metav1.ConditionUnknown} {
		for _, t := range []string{v1alpha1.ConditionResourceSubmitted, v1alpha1.ConditionHealthy} {
			if c := meta.FindStatusCondition(r.Conditions, t); c != nil && c.Status == want {
				return c
			}
		}
	}
	return meta.FindStatusCondition(r.Conditions, v1alpha1.ConditionReady)
}

// ObjectOf is how printers name a resource's stamped object: Kind/name, "pass-through"
// for a resource that forwards an input, or "" when nothing was stamped.
func ObjectOf(r v1alpha1.ResourceStatus) string {
	switch {
	case r.StampedRef != nil:
		return r.StampedRef.Kind + "/" + r.StampedRef.Name
	}
	if c := findCondition(r.Conditions, v1alpha1.ConditionResourceSubmitted); c != nil && c.Reason == v1alpha1.ReasonPassThrough {
		return "pass-through"
	}
	return ""
}

// TemplateOf is how printers name a resource's template: Kind/name.
func TemplateOf(r v1alpha1.ResourceStatus) string {
	if r.TemplateRef == nil {
		return ""
	}
	return r.TemplateRef.Kind + "/" + r.TemplateRef.Name
}

// status is a condition's status, or Unknown for one that is missing.
func status(c *metav1.Condition) metav1.ConditionStatus {
	if c == nil {
		return metav1.ConditionUnknown
	}
	return c.Status
}

// readyOf is a resource's Ready condition, or nil.
func readyOf(r v1alpha1.ResourceStatus) *metav1.Condition {
	return findCondition(r.Conditions, v1alpha1.ConditionReady)
}

// findCondition is the condition of type t among conds, or nil.
func findCondition(conds []metav1.Condition, t string) *metav1.Condition {
	return meta.FindStatusCondition(conds, t)
}
