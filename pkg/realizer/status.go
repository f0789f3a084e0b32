package realizer

import (
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/health"
	"github.com/surveyor-dev/surveyor/pkg/workitems"
)

// observation is everything one reconcile saw of an owner's realization.
type observation struct {
	blueprint    metav1.Condition // SupplyChainReady or DeliveryReady
	blueprintRef *v1alpha1.BlueprintReference
	resources    []*resourceResult
	// keepResources is set when nothing was realized (no usable blueprint): the
	// previous resource entries stay, so their objects can still be pruned later.
	keepResources bool
}

// ownerStatus computes the whole status from an observation: a pure function of the
// previous status (for transition times and the last good generation), what was
// observed, the owner's generation and the time.
func ownerStatus(kind *ownerKind, prev *v1alpha1.OwnerStatus, obs *observation, generation int64, now metav1.Time) v1alpha1.OwnerStatus {
	st := v1alpha1.OwnerStatus{ObservedGeneration: generation}

	var healths []health.ResourceCondition
	var rules []workitems.ResourceConditions
	if obs.keepResources {
		st.Resources = prev.Resources
	} else {
		for _, res := range obs.resources {
			rs := res.status
			ready := health.ResourceReady(generation, &res.submitted, &res.healthy)
			var old []metav1.Condition
			for _, p := range prev.Resources {
				if p.Name == rs.Name {
					old = p.Conditions
				}
			}
			if !res.frozen {
				want := append([]metav1.Condition{res.submitted, res.healthy, ready}, res.rules...)
				for i := range want {
					want[i].ObservedGeneration = generation
				}
				rs.Conditions = mergeConditions(old, want, now)
			}
			st.Resources = append(st.Resources, rs)
			healths = append(healths, health.ResourceCondition{Name: rs.Name, Condition: &res.healthy})
			var types []string
			for _, c := range res.rules {
				types = append(types, c.Type)
			}
			rules = append(rules, workitems.ResourceConditions{Name: rs.Name, Conditions: rs.Conditions, RuleTypes: types})
		}
	}

	sc := withGeneration(obs.blueprint, generation)
	submitted := withGeneration(resourcesSubmitted(sc, obs.resources), generation)
	healthy := health.ResourcesHealthy(generation, healths)
	if obs.keepResources {
		healthy.Status, healthy.Message = metav1.ConditionUnknown, "no resources were stamped: the supply chain is not ready"
	}
	// Every resource is stamped and judged at this generation whenever the supply chain
	// could be realized; frozen resources (a later issue) will count as current too.
	current := !obs.keepResources
	ready := health.OwnerReady(health.OwnerReadyInput{
		Generation: generation, BlueprintReady: &sc, ResourcesSubmitted: &submitted, ResourcesHealthy: &healthy, AllCurrent: current,
	})
	available := health.Available(health.AvailableInput{
		Previous: meta.FindStatusCondition(prev.Conditions, v1alpha1.ConditionAvailable), ResourcesHealthy: &healthy,
		Generation: generation, AllCurrent: current,
	})
	owner := []metav1.Condition{sc, submitted, healthy, ready, available}
	if obs.keepResources {
		// Nothing was evaluated: rule conditions stay as they were.
		for _, c := range prev.Conditions {
			if !slices.Contains(kind.conditionTypes(), c.Type) {
				owner = append(owner, c)
			}
		}
	} else {
		for _, c := range workitems.OwnerConditions(rules) {
			owner = append(owner, withGeneration(c, generation))
		}
	}
	st.Conditions = mergeConditions(prev.Conditions, owner, now)
	return st
}

// conditionTypes are the owner conditions every owner of the kind has, in order.
func (k *ownerKind) conditionTypes() []string {
	return []string{
		k.blueprintReady, v1alpha1.ConditionResourcesSubmitted, v1alpha1.ConditionResourcesHealthy,
		v1alpha1.ConditionReady, v1alpha1.ConditionAvailable,
	}
}

func withGeneration(c metav1.Condition, generation int64) metav1.Condition {
	c.ObservedGeneration = generation
	return c
}

// resourcesSubmitted is True when every resource was submitted; otherwise it carries
// the first False resource's reason and message, else the first Unknown one's. With
// no usable supply chain it is Unknown with the supply chain's reason.
func resourcesSubmitted(sc metav1.Condition, res []*resourceResult) metav1.Condition {
	c := metav1.Condition{Type: v1alpha1.ConditionResourcesSubmitted, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonResourceSubmissionComplete}
	if sc.Status != metav1.ConditionTrue {
		c.Status, c.Reason, c.Message = metav1.ConditionUnknown, sc.Reason, "no resources were submitted: the supply chain is not ready"
		return c
	}
	for _, want := range []metav1.ConditionStatus{metav1.ConditionFalse, metav1.ConditionUnknown} {
		for _, r := range res {
			if r.submitted.Status == want {
				c.Status, c.Reason, c.Message = want, r.submitted.Reason, r.submitted.Message
				return c
			}
		}
	}
	return c
}
