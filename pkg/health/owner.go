package health

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// ResourceCondition is one resource's condition as an owner aggregation sees it.
type ResourceCondition struct {
	// Name is the resource's name in the blueprint, e.g. deployer.
	Name string
	// Condition is the resource's condition, nil when the resource has none; a missing condition
	// counts as Unknown.
	Condition *metav1.Condition
}

// ResourcesHealthy aggregates the resources' Healthy conditions into the owner's ResourcesHealthy,
// with reason HealthyConditionRule whatever its status:
//
//   - True when every resource is healthy (an owner without resources is healthy), empty message;
//   - False when any resource is unhealthy: "resource [deployer] is unhealthy: <its message>";
//   - otherwise Unknown: "resource [deployer] health is unknown: <its message>".
//
// The message names the first resource in that state, in the order given, and adds " and N more"
// when N others are in the same state.
func ResourcesHealthy(generation int64, resources []ResourceCondition) metav1.Condition {
	var firstFalse, firstUnknown *ResourceCondition
	var nFalse, nUnknown int
	for i := range resources {
		r := &resources[i]
		switch status(r.Condition) {
		case metav1.ConditionTrue:
		case metav1.ConditionFalse:
			if nFalse == 0 {
				firstFalse = r
			}
			nFalse++
		default:
			if nUnknown == 0 {
				firstUnknown = r
			}
			nUnknown++
		}
	}
	c := metav1.Condition{
		Type:               v1alpha1.ConditionResourcesHealthy,
		Status:             metav1.ConditionTrue,
		Reason:             v1alpha1.ReasonHealthyConditionRule,
		ObservedGeneration: generation,
	}
	switch {
	case firstFalse != nil:
		c.Status = metav1.ConditionFalse
		c.Message = resourceMessage(firstFalse, "is unhealthy", nFalse-1)
	case firstUnknown != nil:
		c.Status = metav1.ConditionUnknown
		c.Message = resourceMessage(firstUnknown, "health is unknown", nUnknown-1)
	}
	return c
}

func resourceMessage(r *ResourceCondition, state string, more int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "resource [%s] %s", r.Name, state)
	switch {
	case r.Condition == nil:
		b.WriteString(": no Healthy condition was reported")
	case r.Condition.Message != "":
		b.WriteString(": ")
		b.WriteString(r.Condition.Message)
	}
	if more > 0 {
		fmt.Fprintf(&b, " and %d more", more)
	}
	return TruncateMessage(b.String())
}

// ResourceReady is a resource's Ready: ResourceSubmitted AND Healthy. It is True with reason Ready
// when both are True; otherwise it takes the status, reason and message of the condition that
// decided, a False one before an Unknown one, ResourceSubmitted before Healthy. A missing condition
// counts as Unknown with reason ConditionNotReported.
func ResourceReady(generation int64, submitted, healthy *metav1.Condition) metav1.Condition {
	return conjunction(v1alpha1.ConditionReady, generation, []child{
		{v1alpha1.ConditionResourceSubmitted, submitted},
		{v1alpha1.ConditionHealthy, healthy},
	}, "")
}

// OwnerReadyInput is what the owner's Ready is computed from.
type OwnerReadyInput struct {
	// Generation is the owner's current generation.
	Generation int64
	// BlueprintReady is SupplyChainReady for a Workload, DeliveryReady for a Deliverable.
	BlueprintReady *metav1.Condition
	// ResourcesSubmitted is the owner's ResourcesSubmitted.
	ResourcesSubmitted *metav1.Condition
	// ResourcesHealthy is the owner's ResourcesHealthy.
	ResourcesHealthy *metav1.Condition
	// AllCurrent says that every resource was stamped and judged at Generation (a frozen Complete
	// resource counts as current at every generation).
	AllCurrent bool
}

// OwnerReady is the owner's Ready: True with reason Ready only when BlueprintReady,
// ResourcesSubmitted and ResourcesHealthy are True and every resource is current. Otherwise it
// takes the status, reason and message of the condition that decided, a False one before an Unknown
// one, in that order; when the three are True but a resource is behind, it is Unknown
// LatestGenerationNotObserved "waiting for resources to reach generation N". So Ready leaves True as
// soon as the spec changes.
func OwnerReady(in OwnerReadyInput) metav1.Condition {
	blueprint := v1alpha1.ConditionSupplyChainReady
	if in.BlueprintReady != nil && in.BlueprintReady.Type != "" {
		blueprint = in.BlueprintReady.Type
	}
	waiting := ""
	if !in.AllCurrent {
		waiting = fmt.Sprintf("waiting for resources to reach generation %d", in.Generation)
	}
	return conjunction(v1alpha1.ConditionReady, in.Generation, []child{
		{blueprint, in.BlueprintReady},
		{v1alpha1.ConditionResourcesSubmitted, in.ResourcesSubmitted},
		{v1alpha1.ConditionResourcesHealthy, in.ResourcesHealthy},
	}, waiting)
}

type child struct {
	condType  string
	condition *metav1.Condition
}

// conjunction is the AND of children: True with reason Ready when all are True and waiting is
// empty, otherwise the first False child, else the first non-True child, else Unknown
// LatestGenerationNotObserved with the waiting message.
func conjunction(condType string, generation int64, children []child, waiting string) metav1.Condition {
	out := metav1.Condition{Type: condType, ObservedGeneration: generation}
	var decider *child
	for i := range children {
		if status(children[i].condition) == metav1.ConditionFalse {
			decider = &children[i]
			break
		}
	}
	if decider == nil {
		for i := range children {
			if status(children[i].condition) != metav1.ConditionTrue {
				decider = &children[i]
				break
			}
		}
	}
	switch {
	case decider != nil && decider.condition == nil:
		out.Status = metav1.ConditionUnknown
		out.Reason = v1alpha1.ReasonConditionNotReported
		out.Message = fmt.Sprintf("condition %s has not been reported", decider.condType)
	case decider != nil:
		out.Status = status(decider.condition)
		out.Reason = decider.condition.Reason
		out.Message = decider.condition.Message
		if out.Reason == "" {
			out.Reason = v1alpha1.ReasonConditionNotReported
		}
	case waiting != "":
		out.Status = metav1.ConditionUnknown
		out.Reason = v1alpha1.ReasonLatestGenerationNotObserved
		out.Message = waiting
	default:
		out.Status = metav1.ConditionTrue
		out.Reason = v1alpha1.ReasonReady
	}
	return out
}

// status reads a condition's status, Unknown for a missing condition or an unexpected status.
func status(c *metav1.Condition) metav1.ConditionStatus {
	if c == nil {
		return metav1.ConditionUnknown
	}
	switch c.Status {
	case metav1.ConditionTrue, metav1.ConditionFalse:
		return c.Status
	}
	return metav1.ConditionUnknown
}

// terminal are the reasons of a False Ready that no retry fixes (DESIGN §13): no usable
// blueprint, a template that cannot be stamped or that the API server rejects, an invalid
// rule. The owner, its blueprint or a template must change.
var terminal = map[string]bool{
	v1alpha1.ReasonWorkloadLabelsMissing: true, v1alpha1.ReasonSupplyChainNotFound: true, v1alpha1.ReasonMultipleSupplyChainMatches: true,
	v1alpha1.ReasonDeliverableLabelsMissing: true, v1alpha1.ReasonDeliveryNotFound: true, v1alpha1.ReasonMultipleDeliveryMatches: true,
	v1alpha1.ReasonTemplatesNotFound: true, v1alpha1.ReasonRevisionNotTrusted: true,
	v1alpha1.ReasonTemplateStampFailure: true, v1alpha1.ReasonTemplateRejectedByAPIServer: true,
	v1alpha1.ReasonTemplateOptionsMatchError: true, v1alpha1.ReasonResolveTemplateOptionsError: true,
	v1alpha1.ReasonInvalidHealthRule: true, v1alpha1.ReasonInvalidConditionRule: true,
}

// KStatus is what an owner says to tools that wait on objects generically (cli-utils'
// kstatus): Stalled while Ready is False for a terminal reason, or a resource's health rule
// is invalid (its Healthy stays Unknown), so that they fail at once; otherwise Reconciling
// while Ready is not True; nothing once it is. Both are abnormal-true, present only while
// True, and carry the failure's reason and message.
func KStatus(ready metav1.Condition, resources []ResourceCondition) []metav1.Condition {
	if ready.Status == metav1.ConditionTrue {
		return nil
	}
	c := metav1.Condition{Type: v1alpha1.ConditionReconciling, Status: metav1.ConditionTrue, Reason: ready.Reason, Message: ready.Message, ObservedGeneration: ready.ObservedGeneration}
	if ready.Status == metav1.ConditionFalse && terminal[ready.Reason] {
		c.Type = v1alpha1.ConditionStalled
	}
	for _, r := range resources {
		if c.Type == v1alpha1.ConditionReconciling && r.Condition != nil && r.Condition.Reason == v1alpha1.ReasonInvalidHealthRule {
			c.Type, c.Reason, c.Message = v1alpha1.ConditionStalled, r.Condition.Reason, fmt.Sprintf("resource [%s]: %s", r.Name, r.Condition.Message)
		}
	}
	if c.Reason == "" {
		c.Reason = v1alpha1.ReasonUnknown
	}
	return []metav1.Condition{c}
}
