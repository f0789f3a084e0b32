package workitems_test

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/workitems"
)

// A Job that hit its backoff limit has failed as soon as the Job controller sets the interim
// FailureTarget condition; failed or not, it is complete, and the owner is complete once every
// resource with a Complete rule is.
func Example() {
	j := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "batch/v1",
		"kind":       "Job",
		"metadata":   map[string]any{"name": "migrate"},
		"status": map[string]any{"conditions": []any{
			map[string]any{"type": "FailureTarget", "status": "True", "reason": "BackoffLimitExceeded"},
		}},
	}}
	rules := []v1alpha1.ConditionRule{
		{Type: v1alpha1.ConditionRuleTypeWellKnownCompletions},
		{Condition: "Sharded", Type: v1alpha1.ConditionRuleTypeCEL, CELExpressions: []v1alpha1.CELConditionExpression{
			{Expression: "has(object.status.completedIndexes) && indexes(object.status.completedIndexes).size() > 0"},
		}},
	}
	if err := workitems.Validate(rules); err != nil {
		fmt.Println(err)
		return
	}
	conds := workitems.Evaluate(rules, j, nil)
	for _, c := range conds {
		fmt.Printf("%s=%s %s %q\n", c.Type, c.Status, c.Reason, c.Message)
	}
	var types []string // the condition types the resource's rules set
	for _, c := range conds {
		types = append(types, c.Type)
	}
	owner := workitems.OwnerConditions([]workitems.ResourceConditions{
		{Name: "migrate", Conditions: conds, RuleTypes: types},
	})
	for _, c := range owner {
		fmt.Printf("owner %s=%s %q\n", c.Type, c.Status, c.Message)
	}
	// Output:
	// Complete=True ConditionRulesPassed "Job failed: FailureTarget (BackoffLimitExceeded)"
	// Sharded=False ConditionRulesFailed "Resource is not Sharded"
	// owner Complete=True "All resources are Complete"
	// owner Sharded=False "One or more resources is not Sharded"
}
