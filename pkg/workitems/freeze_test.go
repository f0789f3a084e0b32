package workitems_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/workitems"
)

func TestFreeze(t *testing.T) {
	const complete = v1alpha1.ConditionComplete
	then := metav1.NewTime(time.Date(2025, 2, 20, 18, 53, 40, 0, time.UTC))
	// The frozen verdict, compared with its LastTransitionTime and ObservedGeneration: Freeze keeps
	// it exactly as it was.
	wasDone := passed(complete, "Job failed: FailureTarget (BackoffLimitExceeded)")
	wasDone.LastTransitionTime, wasDone.ObservedGeneration = then, 2
	initialized := passed("Initialized", "Resource is Initialized")
	notDone := failed(complete, "Job is not Complete")
	gone := cond(complete, metav1.ConditionUnknown, v1alpha1.ReasonNoStampedObject, workitems.MessageNoObject)
	wasNotDone := notDone
	wasNotDone.LastTransitionTime = then

	tests := []struct {
		name              string
		previous, current []metav1.Condition
		want              []metav1.Condition
	}{
		{name: "never evaluated", previous: nil, current: []metav1.Condition{notDone}, want: []metav1.Condition{notDone}},
		{name: "previously not complete: current wins",
			previous: []metav1.Condition{wasNotDone}, current: []metav1.Condition{passed(complete, "Job succeeded: Complete")},
			want: []metav1.Condition{passed(complete, "Job succeeded: Complete")}},
		{name: "complete stays complete when the object looks incomplete",
			previous: []metav1.Condition{initialized, wasDone}, current: []metav1.Condition{initialized, notDone},
			want: []metav1.Condition{initialized, wasDone}},
		{name: "complete stays complete when the object is gone",
			previous: []metav1.Condition{wasDone}, current: []metav1.Condition{gone}, want: []metav1.Condition{wasDone}},
		{name: "the kept verdict's message does not change",
			previous: []metav1.Condition{wasDone}, current: []metav1.Condition{passed(complete, "Job failed: Failed (BackoffLimitExceeded)")},
			want: []metav1.Condition{wasDone}},
		{name: "complete is appended when the rule is gone",
			previous: []metav1.Condition{wasDone}, current: []metav1.Condition{initialized},
			want: []metav1.Condition{initialized, wasDone}},
		{name: "other conditions are current", previous: []metav1.Condition{failed("Initialized", "x"), wasDone},
			current: []metav1.Condition{notDone, initialized}, want: []metav1.Condition{wasDone, initialized}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			prevCopy := append([]metav1.Condition(nil), tc.previous...)
			curCopy := append([]metav1.Condition(nil), tc.current...)
			got := workitems.Freeze(tc.previous, tc.current)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("conditions mismatch (-want +got):\n%s", diff)
			}
			if !cmp.Equal(prevCopy, tc.previous) || !cmp.Equal(curCopy, tc.current) {
				t.Errorf("Freeze changed its arguments")
			}
		})
	}
}

func TestIsComplete(t *testing.T) {
	const complete = v1alpha1.ConditionComplete
	tests := []struct {
		name  string
		conds []metav1.Condition
		want  bool
	}{
		{name: "none", conds: nil},
		{name: "False", conds: []metav1.Condition{failed(complete, "")}},
		{name: "Unknown", conds: []metav1.Condition{cond(complete, metav1.ConditionUnknown, "R", "")}},
		{name: "another condition True", conds: []metav1.Condition{passed("Initialized", "")}},
		{name: "True", conds: []metav1.Condition{passed("Initialized", ""), passed(complete, "")}, want: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := workitems.IsComplete(tc.conds); got != tc.want {
				t.Errorf("IsComplete = %v, want %v", got, tc.want)
			}
		})
	}
}
