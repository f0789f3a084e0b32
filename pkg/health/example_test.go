package health_test

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/health"
)

// A kapp App judged by the multiMatch rule of the healthRule RFC: the unhealthy field matches, so
// the App is unhealthy and the message comes from its messagePath.
func ExampleEvaluate() {
	app := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kappctrl.k14s.io/v1alpha1",
		"kind":       "App",
		"metadata":   map[string]any{"name": "deployer", "generation": int64(1)},
		"status": map[string]any{
			"observedGeneration": int64(1),
			"usefulErrorMessage": "kapp: Error: Applying create deployment/web",
			"conditions": []any{
				map[string]any{"type": "ReconcileFailed", "status": "True"},
			},
		},
	}}
	rule := &v1alpha1.HealthRule{MultiMatch: &v1alpha1.MultiMatchRule{
		Healthy: v1alpha1.MatchRule{MatchConditions: []v1alpha1.ConditionRequirement{{Type: "ReconcileSucceeded", Status: "True"}}},
		Unhealthy: v1alpha1.MatchRule{MatchFields: []v1alpha1.HealthMatchFieldSelectorRequirement{{
			FieldSelectorRequirement: v1alpha1.FieldSelectorRequirement{
				Key: `status.conditions[?(@.type=="ReconcileFailed")].status`, Operator: "In", Values: []string{"True"},
			},
			MessagePath: ".status.usefulErrorMessage",
		}}},
	}}
	if err := health.Validate(rule, health.FieldHealthRule); err != nil {
		fmt.Println(err)
		return
	}
	c := health.Evaluate(health.Input{Rule: rule, Field: health.FieldHealthRule, Object: app, HasOutputs: true, OutputsRead: true})
	fmt.Println(c.Type, c.Status, c.Reason)
	fmt.Println(c.Message)
	// Output:
	// Healthy False MatchedField
	// field value: True, message: kapp: Error: Applying create deployment/web
}

// The owner's conditions are computed from the resources' conditions.
func ExampleResourcesHealthy() {
	healthy := metav1.Condition{Type: "Healthy", Status: "True", Reason: "AlwaysHealthy"}
	unhealthy := metav1.Condition{Type: "Healthy", Status: "False", Reason: "ReadyCondition", Message: "Back-off pulling image"}
	rh := health.ResourcesHealthy(4, []health.ResourceCondition{
		{Name: "source-provider", Condition: &healthy},
		{Name: "deployer", Condition: &unhealthy},
	})
	fmt.Println(rh.Status, rh.Message)

	ready := health.OwnerReady(health.OwnerReadyInput{
		Generation:         4,
		BlueprintReady:     &metav1.Condition{Type: "SupplyChainReady", Status: "True", Reason: "Ready"},
		ResourcesSubmitted: &metav1.Condition{Type: "ResourcesSubmitted", Status: "True", Reason: "ResourceSubmissionComplete"},
		ResourcesHealthy:   &rh,
		AllCurrent:         true,
	})
	fmt.Println(ready.Status, ready.Reason)

	previous := &metav1.Condition{Type: "Available", Status: "True", Reason: "HealthyAtGeneration", ObservedGeneration: 3,
		Message: "all resources were healthy at generation 3"}
	available := health.Available(health.AvailableInput{Previous: previous, ResourcesHealthy: &rh, Generation: 4, AllCurrent: true})
	fmt.Println(available.Status, available.ObservedGeneration, available.Message)
	// Output:
	// False resource [deployer] is unhealthy: Back-off pulling image
	// False HealthyConditionRule
	// True 3 all resources were healthy at generation 3
}
