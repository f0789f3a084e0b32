package realizer

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/surveyor-dev/surveyor/internal/fixtures"
	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/render"
)

// runnableStatus keeps what an error cannot know (outputs, runs), moves a condition's
// transition time only with its status, and stamps the generation on everything.
func TestRunnableStatus(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	now := metav1.NewTime(t0.Add(time.Minute))
	outputs := map[string]apiextensionsv1.JSON{"revision": {Raw: []byte(`"r1"`)}}
	oldRuns := []v1alpha1.RunStatus{{APIVersion: "v1", Kind: "Pod", Name: "old", Succeeded: metav1.ConditionTrue}}
	prev := v1alpha1.RunnableStatus{
		ObservedGeneration: 1,
		Conditions: []metav1.Condition{
			{Type: v1alpha1.ConditionRunTemplateReady, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonReady, LastTransitionTime: t0, ObservedGeneration: 1},
			{Type: v1alpha1.ConditionStampedObjectCondition, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonSucceededCondition, LastTransitionTime: t0, ObservedGeneration: 1},
			{Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonReady, LastTransitionTime: t0, ObservedGeneration: 1},
		},
		Outputs: outputs,
		Runs:    oldRuns,
	}
	newRun := fixtures.Object(t, "apiVersion: v1\nkind: Pod\nmetadata: {name: new}\nstatus: {conditions: [{type: Succeeded, status: \"True\"}]}")
	failure := render.RunTemplateFailure(v1alpha1.ReasonRunTemplateNotFound, "gone")
	tests := []struct {
		name        string
		obs         runObservation
		wantOutputs map[string]apiextensionsv1.JSON
		wantRuns    []string
		// wantMoved are the conditions whose transition time is now.
		wantMoved []string
	}{
		{
			name:        "an error keeps the outputs and runs",
			obs:         runObservation{result: render.RunnableResult{Failure: failure}},
			wantOutputs: outputs, wantRuns: []string{"old"},
			wantMoved: []string{v1alpha1.ConditionRunTemplateReady, v1alpha1.ConditionStampedObjectCondition, v1alpha1.ConditionReady},
		},
		{
			name: "new outputs and runs replace the old",
			obs: runObservation{
				result:  render.RunnableResult{Newest: newRun},
				outputs: map[string]apiextensionsv1.JSON{"revision": {Raw: []byte(`"r2"`)}}, runs: []*unstructured.Unstructured{newRun}, runsKnown: true,
			},
			wantOutputs: map[string]apiextensionsv1.JSON{"revision": {Raw: []byte(`"r2"`)}}, wantRuns: []string{"new"},
		},
		{
			name:        "no run succeeded yet: the outputs stay",
			obs:         runObservation{result: render.RunnableResult{Newest: newRun}, runsKnown: true},
			wantOutputs: outputs, wantRuns: nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := runnableStatus(&prev, &tt.obs, 2, now)
			if st.ObservedGeneration != 2 {
				t.Errorf("observedGeneration %d, want 2", st.ObservedGeneration)
			}
			if diff := cmp.Diff(tt.wantOutputs, st.Outputs); diff != "" {
				t.Errorf("outputs (-want +got):\n%s", diff)
			}
			var runs []string
			for _, r := range st.Runs {
				runs = append(runs, r.Name)
			}
			if diff := cmp.Diff(tt.wantRuns, runs); diff != "" {
				t.Errorf("runs (-want +got):\n%s", diff)
			}
			for _, c := range st.Conditions {
				if c.ObservedGeneration != 2 {
					t.Errorf("%s: observedGeneration %d, want 2", c.Type, c.ObservedGeneration)
				}
				moved := c.LastTransitionTime.Equal(&now)
				want := false
				for _, m := range tt.wantMoved {
					want = want || m == c.Type
				}
				if moved != want {
					t.Errorf("%s: transition time moved %t, want %t", c.Type, moved, want)
				}
			}
		})
	}
}
