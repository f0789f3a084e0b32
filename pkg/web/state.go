package web

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/view"
)

// State is a state the owner list filters by; the empty State is every owner.
type State string

// The states an owner list filters by. An owner can be in several (a failed Job is
// complete and unhealthy).
const (
	StateAll State = ""
	// StateReady is Ready at the current generation.
	StateReady State = "ready"
	// StateNotReady is anything else, a status that lags the spec included.
	StateNotReady State = "not-ready"
	// StateUnhealthy has a resource that is unhealthy: ResourcesHealthy is False.
	StateUnhealthy State = "unhealthy"
	// StateComplete is Complete=True: every resource with a Complete rule completed.
	StateComplete State = "complete"
	// StateRollingOut is moving to something new: admitted to its blueprint's rollout and
	// not yet Ready there (rollout state Progressing), or a new generation of its own on
	// its way while the last good one is still Available.
	StateRollingOut State = "rolling-out"
)

// States are the states in the order the page counts them.
var States = []State{StateAll, StateReady, StateNotReady, StateUnhealthy, StateComplete, StateRollingOut}

// Label is how the page names the state.
func (s State) Label() string {
	switch s {
	case StateAll:
		return "all"
	case StateNotReady:
		return "not Ready"
	case StateReady:
		return "Ready"
	case StateRollingOut:
		return "rolling out"
	}
	return string(s)
}

// Valid reports whether s is one of States.
func (s State) Valid() bool {
	for _, v := range States {
		if s == v {
			return true
		}
	}
	return false
}

// Has reports whether the owner is in state s.
func (s State) Has(o view.Owner) bool {
	switch s {
	case StateAll:
		return true
	case StateReady:
		return o.ReadyNow()
	case StateNotReady:
		return !o.ReadyNow()
	case StateUnhealthy:
		return is(o.Condition(v1alpha1.ConditionResourcesHealthy), metav1.ConditionFalse)
	case StateComplete:
		return is(o.Condition(v1alpha1.ConditionComplete), metav1.ConditionTrue)
	case StateRollingOut:
		if r := o.Status.Rollout; r != nil && r.State == v1alpha1.RolloutProgressing {
			return true
		}
		available := o.Condition(v1alpha1.ConditionAvailable)
		return !o.ReadyNow() && !is(o.Condition(v1alpha1.ConditionReady), metav1.ConditionFalse) &&
			is(available, metav1.ConditionTrue) && available.ObservedGeneration < o.Generation
	}
	return false
}

func is(c *metav1.Condition, s metav1.ConditionStatus) bool { return c != nil && c.Status == s }
