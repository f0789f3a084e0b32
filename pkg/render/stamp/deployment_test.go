package stamp_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/render/stamp"
)

func TestDeploymentSucceeded(t *testing.T) {
	obj := func(generation int64, status map[string]any, spec map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "example.com/v1", "kind": "App",
			"metadata": map[string]any{"name": "app", "generation": generation},
			"spec":     spec,
		}}
		if status != nil {
			u.Object["status"] = status
		}
		return u
	}
	matches := &v1alpha1.ClusterDeploymentTemplateSpec{ObservedMatches: []v1alpha1.ObservedMatch{{Input: "spec.value", Output: "status.value"}}}
	completion := &v1alpha1.ClusterDeploymentTemplateSpec{ObservedCompletion: &v1alpha1.ObservedCompletion{
		Succeeded: v1alpha1.CompletionCondition{Key: "status.phase", Value: "Done"},
		Failed:    &v1alpha1.CompletionCondition{Key: "status.phase", Value: "Broken"},
	}}
	notMet := func(msg string) *metav1.Condition {
		return &metav1.Condition{Type: v1alpha1.ConditionResourceSubmitted, Status: metav1.ConditionUnknown, Reason: v1alpha1.ReasonConditionNotMet, Message: msg}
	}
	tests := []struct {
		name string
		spec *v1alpha1.ClusterDeploymentTemplateSpec
		obj  *unstructured.Unstructured
		want *metav1.Condition
	}{
		{"matches", matches, obj(1, map[string]any{"value": "v1"}, map[string]any{"value": "v1"}), nil},
		{"maps match by content", matches, obj(1, map[string]any{"value": map[string]any{"a": int64(1), "b": []any{"x"}}}, map[string]any{"value": map[string]any{"b": []any{"x"}, "a": 1.0}}), nil},
		{"unequal numbers print as JSON", matches, obj(1, map[string]any{"value": 2.5}, map[string]any{"value": int64(3)}),
			notMet("input [spec.value] and output [status.value] do not match: 3 != 2.5")},
		{"unequal maps do not panic", matches, obj(1, map[string]any{"value": map[string]any{"a": "y"}}, map[string]any{"value": map[string]any{"a": "x"}}),
			notMet(`input [spec.value] and output [status.value] do not match: {"a":"x"} != {"a":"y"}`)},
		{"succeeded", completion, obj(2, map[string]any{"observedGeneration": int64(2), "phase": "Done"}, nil), nil},
		{"no observedGeneration", completion, obj(2, map[string]any{"phase": "Done"}, nil), &metav1.Condition{
			Type: v1alpha1.ConditionResourceSubmitted, Status: metav1.ConditionFalse, Reason: v1alpha1.ReasonTemplateStampFailure,
			Message: "resource [deployer] cannot satisfy observedCompletion without observedGeneration in object status"}},
		{"behind", completion, obj(3, map[string]any{"observedGeneration": int64(2), "phase": "Done"}, nil),
			notMet("status.observedGeneration does not equal metadata.generation: 2 != 3")},
		{"failed comes first", completion, obj(1, map[string]any{"observedGeneration": int64(1), "phase": "Broken"}, nil), &metav1.Condition{
			Type: v1alpha1.ConditionResourceSubmitted, Status: metav1.ConditionFalse, Reason: v1alpha1.ReasonFailedConditionMet,
			Message: "deployment failure condition [status.phase] was: Broken"}},
		{"not yet succeeded", completion, obj(1, map[string]any{"observedGeneration": int64(1), "phase": "Running"}, nil),
			notMet("deployment success condition [status.phase] was: Running, expected: Done")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := stamp.DeploymentSucceeded(tt.spec, tt.obj, "deployer")
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("DeploymentSucceeded() (-want +got):\n%s", diff)
			}
		})
	}
	// An unreadable path names it.
	got := stamp.DeploymentSucceeded(matches, obj(1, map[string]any{}, map[string]any{"value": "v1"}), "deployer")
	if got == nil || got.Reason != v1alpha1.ReasonConditionNotMet || got.Message[:len("could not find value on output [status.value]: ")] != "could not find value on output [status.value]: " {
		t.Errorf("missing output: got %+v", got)
	}
}
