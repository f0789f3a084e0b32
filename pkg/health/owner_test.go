package health_test

import (
	"strconv"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/surveyor-dev/surveyor/pkg/health"
)

func cond(condType string, status metav1.ConditionStatus, reason, message string) *metav1.Condition {
	return &metav1.Condition{Type: condType, Status: status, Reason: reason, Message: message,
		LastTransitionTime: metav1.Unix(1700000000, 0)}
}

func TestResourcesHealthy(t *testing.T) {
	ok := cond("Healthy", "True", "MatchedCondition", "fine")
	bad := func(msg string) *metav1.Condition { return cond("Healthy", "False", "MatchedField", msg) }
	unk := func(msg string) *metav1.Condition { return cond("Healthy", "Unknown", "NoMatchesFulfilled", msg) }
	rh := func(status metav1.ConditionStatus, message string) metav1.Condition {
		return metav1.Condition{Type: "ResourcesHealthy", Status: status, Reason: "HealthyConditionRule", Message: message, ObservedGeneration: 4}
	}
	tests := []struct {
		name      string
		resources []health.ResourceCondition
		want      metav1.Condition
	}{
		{"no resources", nil, rh("True", "")},
		{"all healthy", []health.ResourceCondition{{"source", ok}, {"deployer", ok}}, rh("True", "")},
		{"one unhealthy", []health.ResourceCondition{{"source", ok}, {"deployer", bad("crash loop")}},
			rh("False", "resource [deployer] is unhealthy: crash loop")},
		{"unhealthy before unknown", []health.ResourceCondition{{"source", unk("waiting")}, {"deployer", bad("crash loop")}},
			rh("False", "resource [deployer] is unhealthy: crash loop")},
		{"several unhealthy", []health.ResourceCondition{{"a", bad("one")}, {"b", ok}, {"c", bad("two")}, {"d", bad("three")}},
			rh("False", "resource [a] is unhealthy: one and 2 more")},
		{"unknown", []health.ResourceCondition{{"source", ok}, {"deployer", unk("no matches")}},
			rh("Unknown", "resource [deployer] health is unknown: no matches")},
		{"several unknown", []health.ResourceCondition{{"a", unk("x")}, {"b", unk("y")}},
			rh("Unknown", "resource [a] health is unknown: x and 1 more")},
		{"missing condition counts as unknown", []health.ResourceCondition{{"source", ok}, {"deployer", nil}},
			rh("Unknown", "resource [deployer] health is unknown: no Healthy condition was reported")},
		{"empty message", []health.ResourceCondition{{"deployer", bad("")}},
			rh("False", "resource [deployer] is unhealthy")},
		{"unexpected status counts as unknown", []health.ResourceCondition{{"deployer", cond("Healthy", "Maybe", "X", "odd")}},
			rh("Unknown", "resource [deployer] health is unknown: odd")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assertCondition(t, tt.want, health.ResourcesHealthy(4, tt.resources))
		})
	}
}

func TestResourceReady(t *testing.T) {
	submitted := cond("ResourceSubmitted", "True", "ResourceSubmissionComplete", "")
	healthy := cond("Healthy", "True", "AlwaysHealthy", "")
	ready := func(status metav1.ConditionStatus, reason, message string) metav1.Condition {
		return metav1.Condition{Type: "Ready", Status: status, Reason: reason, Message: message, ObservedGeneration: 2}
	}
	tests := []struct {
		name              string
		submitted, health *metav1.Condition
		want              metav1.Condition
	}{
		{"both true", submitted, healthy, ready("True", "Ready", "")},
		{"not submitted", cond("ResourceSubmitted", "False", "TemplateStampFailure", "missing param"), healthy,
			ready("False", "TemplateStampFailure", "missing param")},
		{"unhealthy", submitted, cond("Healthy", "False", "ReadyCondition", "image pull"),
			ready("False", "ReadyCondition", "image pull")},
		{"false health before unknown submission",
			cond("ResourceSubmitted", "Unknown", "MissingValueAtPath", "waiting to read value"),
			cond("Healthy", "False", "MatchedField", "failed"),
			ready("False", "MatchedField", "failed")},
		{"unknown submission before unknown health",
			cond("ResourceSubmitted", "Unknown", "MissingValueAtPath", "waiting to read value"),
			cond("Healthy", "Unknown", "NoMatchesFulfilled", "no matches"),
			ready("Unknown", "MissingValueAtPath", "waiting to read value")},
		{"missing health", submitted, nil, ready("Unknown", "ConditionNotReported", "condition Healthy has not been reported")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assertCondition(t, tt.want, health.ResourceReady(2, tt.submitted, tt.health))
		})
	}
}

func TestOwnerReady(t *testing.T) {
	scReady := cond("SupplyChainReady", "True", "Ready", "")
	submitted := cond("ResourcesSubmitted", "True", "ResourceSubmissionComplete", "")
	healthy := cond("ResourcesHealthy", "True", "HealthyConditionRule", "")
	ready := func(status metav1.ConditionStatus, reason, message string) metav1.Condition {
		return metav1.Condition{Type: "Ready", Status: status, Reason: reason, Message: message, ObservedGeneration: 5}
	}
	tests := []struct {
		name string
		in   health.OwnerReadyInput
		want metav1.Condition
	}{
		{"all true and current", health.OwnerReadyInput{BlueprintReady: scReady, ResourcesSubmitted: submitted, ResourcesHealthy: healthy, AllCurrent: true},
			ready("True", "Ready", "")},
		{"all true, resources behind", health.OwnerReadyInput{BlueprintReady: scReady, ResourcesSubmitted: submitted, ResourcesHealthy: healthy},
			ready("Unknown", "LatestGenerationNotObserved", "waiting for resources to reach generation 5")},
		{"no supply chain", health.OwnerReadyInput{
			BlueprintReady:     cond("SupplyChainReady", "False", "SupplyChainNotFound", "no supply chain [x] found"),
			ResourcesSubmitted: cond("ResourcesSubmitted", "Unknown", "X", ""), AllCurrent: true},
			ready("False", "SupplyChainNotFound", "no supply chain [x] found")},
		{"unhealthy", health.OwnerReadyInput{BlueprintReady: scReady, ResourcesSubmitted: submitted,
			ResourcesHealthy: cond("ResourcesHealthy", "False", "HealthyConditionRule", "resource [deployer] is unhealthy: x")},
			ready("False", "HealthyConditionRule", "resource [deployer] is unhealthy: x")},
		{"false after unknown in order still wins", health.OwnerReadyInput{BlueprintReady: scReady,
			ResourcesSubmitted: cond("ResourcesSubmitted", "Unknown", "MissingValueAtPath", "waiting"),
			ResourcesHealthy:   cond("ResourcesHealthy", "False", "HealthyConditionRule", "bad"), AllCurrent: true},
			ready("False", "HealthyConditionRule", "bad")},
		{"first unknown in order", health.OwnerReadyInput{BlueprintReady: scReady,
			ResourcesSubmitted: cond("ResourcesSubmitted", "Unknown", "MissingValueAtPath", "waiting"),
			ResourcesHealthy:   cond("ResourcesHealthy", "Unknown", "HealthyConditionRule", "unknown"), AllCurrent: true},
			ready("Unknown", "MissingValueAtPath", "waiting")},
		{"deliverable", health.OwnerReadyInput{
			BlueprintReady:     cond("DeliveryReady", "False", "DeliveryNotFound", "none"),
			ResourcesSubmitted: submitted, ResourcesHealthy: healthy, AllCurrent: true},
			ready("False", "DeliveryNotFound", "none")},
		{"missing condition", health.OwnerReadyInput{ResourcesSubmitted: submitted, ResourcesHealthy: healthy, AllCurrent: true},
			ready("Unknown", "ConditionNotReported", "condition SupplyChainReady has not been reported")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.Generation = 5
			assertCondition(t, tt.want, health.OwnerReady(tt.in))
		})
	}
}

func TestAvailable(t *testing.T) {
	healthy := cond("ResourcesHealthy", "True", "HealthyConditionRule", "")
	unhealthy := cond("ResourcesHealthy", "False", "HealthyConditionRule", "resource [deployer] is unhealthy: crash")
	unknown := cond("ResourcesHealthy", "Unknown", "HealthyConditionRule", "resource [deployer] health is unknown: x")
	availableAt := func(n int64) *metav1.Condition {
		c := cond("Available", "True", "HealthyAtGeneration", "")
		c.Message = "all resources were healthy at generation " + strconv.FormatInt(n, 10)
		c.ObservedGeneration = n
		return c
	}
	failedAt := func(n int64, msg string) *metav1.Condition {
		c := cond("Available", "False", "HealthyConditionRule", msg)
		c.ObservedGeneration = n
		return c
	}
	notYet := &metav1.Condition{Type: "Available", Status: "False", Reason: "NotYetAvailable", Message: "no generation has been healthy yet"}
	plain := func(c *metav1.Condition) metav1.Condition {
		out := *c
		out.LastTransitionTime = metav1.Time{}
		return out
	}
	tests := []struct {
		name string
		in   health.AvailableInput
		want metav1.Condition
	}{
		{"first healthy generation", health.AvailableInput{ResourcesHealthy: healthy, Generation: 1, AllCurrent: true},
			plain(availableAt(1))},
		{"never healthy", health.AvailableInput{ResourcesHealthy: unhealthy, Generation: 1, AllCurrent: true}, plain(notYet)},
		{"never judged", health.AvailableInput{Generation: 1}, plain(notYet)},
		{"still not yet", health.AvailableInput{Previous: notYet, ResourcesHealthy: unknown, Generation: 2, AllCurrent: true}, plain(notYet)},
		{"healthy but resources behind is no verdict", health.AvailableInput{ResourcesHealthy: healthy, Generation: 2}, plain(notYet)},
		{"stays true while a new generation rolls out", health.AvailableInput{Previous: availableAt(1), ResourcesHealthy: unknown, Generation: 2, AllCurrent: true},
			plain(availableAt(1))},
		{"stays true when resources lag", health.AvailableInput{Previous: availableAt(1), ResourcesHealthy: healthy, Generation: 2},
			plain(availableAt(1))},
		{"stays true when the new generation is unhealthy", health.AvailableInput{Previous: availableAt(1), ResourcesHealthy: unhealthy, Generation: 2, AllCurrent: true},
			plain(availableAt(1))},
		{"moves to the new generation once healthy", health.AvailableInput{Previous: availableAt(1), ResourcesHealthy: healthy, Generation: 2, AllCurrent: true},
			plain(availableAt(2))},
		{"turns false when unhealthy at its own generation", health.AvailableInput{Previous: availableAt(2), ResourcesHealthy: unhealthy, Generation: 2, AllCurrent: true},
			plain(failedAt(2, "resource [deployer] is unhealthy: crash"))},
		{"false stays false while a newer generation rolls out (seed 003 case 3)", health.AvailableInput{Previous: failedAt(1, "old"), ResourcesHealthy: unknown, Generation: 2, AllCurrent: true},
			plain(failedAt(1, "old"))},
		{"false stays false when a newer generation is unhealthy", health.AvailableInput{Previous: failedAt(1, "old"), ResourcesHealthy: unhealthy, Generation: 2, AllCurrent: true},
			plain(failedAt(1, "old"))},
		{"false at N recovers at N", health.AvailableInput{Previous: failedAt(2, "old"), ResourcesHealthy: healthy, Generation: 2, AllCurrent: true},
			plain(availableAt(2))},
		{"false recovers at a newer generation", health.AvailableInput{Previous: failedAt(1, "old"), ResourcesHealthy: healthy, Generation: 3, AllCurrent: true},
			plain(availableAt(3))},
		{"unknown previous is ignored", health.AvailableInput{Previous: cond("Available", "Unknown", "X", ""), ResourcesHealthy: unknown, Generation: 1, AllCurrent: true},
			plain(notYet)},
		{"missing ResourcesHealthy is no verdict", health.AvailableInput{Previous: availableAt(3), Generation: 3, AllCurrent: true},
			plain(availableAt(3))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := health.Available(tt.in)
			assertCondition(t, tt.want, got)
			if !got.LastTransitionTime.IsZero() {
				t.Error("Available set LastTransitionTime")
			}
		})
	}
}
