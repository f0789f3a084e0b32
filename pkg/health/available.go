package health

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// AvailableInput is what the owner's Available is computed from.
type AvailableInput struct {
	// Previous is the owner's Available condition as last written, nil when there is none.
	Previous *metav1.Condition
	// ResourcesHealthy is the owner's ResourcesHealthy as just computed.
	ResourcesHealthy *metav1.Condition
	// Generation is the owner's current generation.
	Generation int64
	// AllCurrent says that every resource was stamped and judged at Generation, so that
	// ResourcesHealthy is a verdict on Generation and not on a mix of generations.
	AllCurrent bool
}

// Available is the owner's last known good (seed 003). Its ObservedGeneration is not the generation
// the status was computed at but the generation the verdict is about. Let G be Generation and N the
// previous condition's ObservedGeneration.
//
// A verdict exists only when AllCurrent holds: ResourcesHealthy is then about generation G. An
// Unknown ResourcesHealthy is no verdict (the rollout of G is in progress).
//
//   - All healthy at G (G >= N): True HealthyAtGeneration, "all resources were healthy at
//     generation G", ObservedGeneration G.
//   - Unhealthy at G = N: False HealthyConditionRule with ResourcesHealthy's message,
//     ObservedGeneration N. Only an unhealthy resource at the very generation Available speaks about
//     turns it False.
//   - Unhealthy at G > N, or no verdict: the previous condition stays as it is, so Available stays
//     True at N while a newer generation rolls out or fails, and a False at N stays False until a
//     generation is all healthy.
//   - No previous True or False condition and no healthy verdict: False NotYetAvailable, "no
//     generation has been healthy yet", ObservedGeneration 0.
//
// The result never carries a LastTransitionTime: the caller merges it.
func Available(in AvailableInput) metav1.Condition {
	prev := in.Previous
	if prev != nil && prev.Status != metav1.ConditionTrue && prev.Status != metav1.ConditionFalse {
		prev = nil
	}
	if prev != nil && prev.Reason == v1alpha1.ReasonNotYetAvailable {
		prev = nil
	}
	verdict := metav1.ConditionUnknown
	if in.AllCurrent {
		verdict = status(in.ResourcesHealthy)
	}
	switch {
	case verdict == metav1.ConditionTrue && (prev == nil || in.Generation >= prev.ObservedGeneration):
		return metav1.Condition{
			Type:               v1alpha1.ConditionAvailable,
			Status:             metav1.ConditionTrue,
			Reason:             v1alpha1.ReasonHealthyAtGeneration,
			Message:            fmt.Sprintf("all resources were healthy at generation %d", in.Generation),
			ObservedGeneration: in.Generation,
		}
	case verdict == metav1.ConditionFalse && prev != nil && in.Generation == prev.ObservedGeneration:
		return metav1.Condition{
			Type:               v1alpha1.ConditionAvailable,
			Status:             metav1.ConditionFalse,
			Reason:             v1alpha1.ReasonHealthyConditionRule,
			Message:            in.ResourcesHealthy.Message,
			ObservedGeneration: prev.ObservedGeneration,
		}
	case prev != nil:
		return metav1.Condition{
			Type:               v1alpha1.ConditionAvailable,
			Status:             prev.Status,
			Reason:             prev.Reason,
			Message:            prev.Message,
			ObservedGeneration: prev.ObservedGeneration,
		}
	}
	return metav1.Condition{
		Type:    v1alpha1.ConditionAvailable,
		Status:  metav1.ConditionFalse,
		Reason:  v1alpha1.ReasonNotYetAvailable,
		Message: "no generation has been healthy yet",
	}
}
