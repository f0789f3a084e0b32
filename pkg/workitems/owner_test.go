package workitems_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/workitems"
)

func TestOwnerConditions(t *testing.T) {
	const complete = v1alpha1.ConditionComplete
	healthy := cond(v1alpha1.ConditionHealthy, metav1.ConditionTrue, v1alpha1.ReasonAlwaysHealthy, "")
	done := passed(complete, "Job succeeded: Complete")
	notDone := failed(complete, "Job is not Complete")
	unknown := cond(complete, metav1.ConditionUnknown, v1alpha1.ReasonNoStampedObject, workitems.MessageNoObject)
	allDone := passed(complete, "All resources are Complete")
	notAllDone := failed(complete, "One or more resources is not Complete")
	res := func(name string, ruleTypes []string, conds ...metav1.Condition) workitems.ResourceConditions {
		return workitems.ResourceConditions{Name: name, Conditions: append([]metav1.Condition{healthy}, conds...), RuleTypes: ruleTypes}
	}
	completeRule := []string{complete}
	tests := []struct {
		name      string
		resources []workitems.ResourceConditions
		want      []metav1.Condition
	}{
		{name: "no resources", resources: nil, want: []metav1.Condition{}},
		{name: "no rules", resources: []workitems.ResourceConditions{res("source", nil), res("image", nil)}, want: []metav1.Condition{}},
		{name: "all complete",
			resources: []workitems.ResourceConditions{res("migrate", completeRule, done), res("seed", completeRule, done)},
			want:      []metav1.Condition{allDone}},
		{name: "one not complete",
			resources: []workitems.ResourceConditions{res("migrate", completeRule, done), res("seed", completeRule, notDone)},
			want:      []metav1.Condition{notAllDone}},
		{name: "Unknown counts as not True",
			resources: []workitems.ResourceConditions{res("migrate", completeRule, done), res("seed", completeRule, unknown)},
			want:      []metav1.Condition{notAllDone}},
		{name: "a missing condition counts as not True",
			resources: []workitems.ResourceConditions{res("migrate", completeRule, done), res("seed", completeRule)},
			want:      []metav1.Condition{notAllDone}},
		{name: "resources without the rule take no part",
			resources: []workitems.ResourceConditions{res("config", nil), res("migrate", completeRule, done), res("app", []string{"Initialized"}, notDone)},
			want:      []metav1.Condition{allDone, failed("Initialized", "One or more resources is not Initialized")}},
		{name: "a condition without a rule is ignored",
			resources: []workitems.ResourceConditions{res("migrate", completeRule, done), res("old", nil, notDone)},
			want:      []metav1.Condition{allDone}},
		{name: "types in first-seen order",
			resources: []workitems.ResourceConditions{
				res("a", []string{"Initialized"}, passed("Initialized", "Resource is Initialized")),
				res("b", []string{complete, "Initialized", "Verified"}, done, passed("Initialized", "x"), failed("Verified", "y")),
			},
			want: []metav1.Condition{passed("Initialized", "All resources are Initialized"), allDone,
				failed("Verified", "One or more resources is not Verified")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assertConditions(t, tc.want, workitems.OwnerConditions(tc.resources), nil)
		})
	}
}
