package health_test

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/health"
)

func healthyCond(status metav1.ConditionStatus, reason, message string) metav1.Condition {
	return metav1.Condition{Type: v1alpha1.ConditionHealthy, Status: status, Reason: reason, Message: message}
}

// configMap is a stamped object without status, as a ClusterTemplate stamps.
const configMapYAML = `
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: dev}
data: {a: b}
`

// staleYAML is an object whose controller has not caught up with generation 5.
const staleYAML = `
apiVersion: example.com/v1
kind: App
metadata: {name: app, generation: 5}
status:
  observedGeneration: 4
  conditions:
  - {type: Ready, status: "True", message: ready}
`

func TestEvaluateNoRule(t *testing.T) {
	cm := object(t, configMapYAML)
	tests := []struct {
		name string
		in   health.Input
		want metav1.Condition
	}{
		{"no object yet", health.Input{HasOutputs: true},
			healthyCond("Unknown", "OutputNotAvailable", "no object has been stamped yet")},
		{"no object yet, ClusterTemplate", health.Input{},
			healthyCond("Unknown", "NoStampedObject", "no object has been stamped yet")},
		{"ClusterTemplate with a stamped object", health.Input{Object: cm},
			healthyCond("True", "AlwaysHealthy", "")},
		{"ClusterTemplate skips the generation check", health.Input{Object: object(t, staleYAML)},
			healthyCond("True", "AlwaysHealthy", "")},
		{"outputs present", health.Input{Object: deployment(t), HasOutputs: true, OutputsRead: true},
			healthyCond("True", "OutputsAvailable", "")},
		{"outputs missing", health.Input{Object: deployment(t), HasOutputs: true},
			healthyCond("Unknown", "OutputNotAvailable", "waiting for the object's outputs")},
		{"outputs present, object stale", health.Input{Object: object(t, staleYAML), HasOutputs: true, OutputsRead: true},
			healthyCond("Unknown", "LatestGenerationNotObserved", "waiting for App/app to observe generation 5 (observed 4)")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assertCondition(t, tt.want, health.Evaluate(tt.in))
		})
	}
}

func TestEvaluateAlwaysHealthy(t *testing.T) {
	rule := &v1alpha1.HealthRule{AlwaysHealthy: &v1alpha1.AlwaysHealthyRule{}}
	tests := []struct {
		name string
		obj  *unstructured.Unstructured
		want metav1.Condition
	}{
		{"stamped", object(t, configMapYAML), healthyCond("True", "AlwaysHealthy", "")},
		{"stale object is still healthy", object(t, staleYAML), healthyCond("True", "AlwaysHealthy", "")},
		{"nothing stamped", nil, healthyCond("Unknown", "NoStampedObject", "no object has been stamped yet")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := health.Evaluate(health.Input{Rule: rule, Object: tt.obj, HasOutputs: true})
			assertCondition(t, tt.want, got)
		})
	}
}

func TestEvaluateSingleConditionType(t *testing.T) {
	withStatus := func(status, message string) *unstructured.Unstructured {
		return object(t, `
apiVersion: example.com/v1
kind: App
metadata: {name: app, generation: 2}
status:
  conditions:
  - {type: Other, status: "False", message: other}
  - {type: Ready, status: "`+status+`", reason: Because, message: "`+message+`"}
`)
	}
	tests := []struct {
		name     string
		condType string
		obj      *unstructured.Unstructured
		want     metav1.Condition
	}{
		{"True copied", "Ready", withStatus("True", "all good"), healthyCond("True", "ReadyCondition", "all good")},
		{"False copied", "Ready", withStatus("False", "image pull failed"), healthyCond("False", "ReadyCondition", "image pull failed")},
		{"Unknown copied", "Ready", withStatus("Unknown", "reconciling"), healthyCond("Unknown", "ReadyCondition", "reconciling")},
		{"unexpected status is Unknown", "Ready", withStatus("Maybe", "hm"), healthyCond("Unknown", "ReadyCondition", "hm")},
		{"missing condition", "Succeeded", withStatus("True", "x"),
			healthyCond("Unknown", "SucceededCondition", "condition with type [Succeeded] not found on resource status")},
		{"no status at all", "Ready", object(t, configMapYAML),
			healthyCond("Unknown", "ReadyCondition", "condition with type [Ready] not found on resource status")},
		{"Deployment Available", "Available", deployment(t),
			healthyCond("True", "AvailableCondition", "Deployment has minimum availability.")},
		{"Job Complete", "Complete", job(t),
			healthyCond("True", "CompleteCondition", "Reached expected number of succeeded pods")},
		{"qualified type gives a valid reason", "example.com/Ready", object(t, `
kind: App
metadata: {name: app}
status: {conditions: [{type: example.com/Ready, status: "True", message: ok}]}
`), healthyCond("True", "example_com_ReadyCondition", "ok")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rule := &v1alpha1.HealthRule{SingleConditionType: tt.condType}
			assertCondition(t, tt.want, health.Evaluate(health.Input{Rule: rule, Object: tt.obj, HasOutputs: true}))
		})
	}
}

func TestEvaluateGeneration(t *testing.T) {
	app := func(generation, observed, condObserved string) *unstructured.Unstructured {
		doc := "kind: App\nmetadata: {name: app"
		if generation != "" {
			doc += ", generation: " + generation
		}
		doc += "}\nstatus:\n"
		if observed != "" {
			doc += "  observedGeneration: " + observed + "\n"
		}
		doc += "  conditions:\n  - {type: Ready, status: \"True\", message: ready"
		if condObserved != "" {
			doc += ", observedGeneration: " + condObserved
		}
		doc += "}\n  - {type: Failed, status: \"True\", message: boom"
		if condObserved != "" {
			doc += ", observedGeneration: " + condObserved
		}
		return object(t, doc+"}\n")
	}
	single := &v1alpha1.HealthRule{SingleConditionType: "Ready"}
	matchReady := multiMatch(
		v1alpha1.MatchRule{MatchConditions: []v1alpha1.ConditionRequirement{{Type: "Ready", Status: "True"}}},
		v1alpha1.MatchRule{MatchConditions: []v1alpha1.ConditionRequirement{{Type: "Stalled", Status: "True"}}},
	)
	matchFailed := multiMatch(
		v1alpha1.MatchRule{MatchConditions: []v1alpha1.ConditionRequirement{{Type: "Ready", Status: "True"}}},
		v1alpha1.MatchRule{MatchConditions: []v1alpha1.ConditionRequirement{{Type: "Failed", Status: "True"}}},
	)
	matchField := multiMatch(
		v1alpha1.MatchRule{MatchFields: []v1alpha1.HealthMatchFieldSelectorRequirement{field("status.conditions[0].status", "In", "True")}},
		v1alpha1.MatchRule{MatchFields: []v1alpha1.HealthMatchFieldSelectorRequirement{field("status.phase", "In", "Failed")}},
	)
	stale := func(n, m string) metav1.Condition {
		return healthyCond("Unknown", "LatestGenerationNotObserved", "waiting for App/app to observe generation "+n+" (observed "+m+")")
	}
	tests := []struct {
		name string
		rule *v1alpha1.HealthRule
		obj  *unstructured.Unstructured
		want metav1.Condition
	}{
		{"current object", single, app("3", "3", ""), healthyCond("True", "ReadyCondition", "ready")},
		{"stale object", single, app("3", "2", ""), stale("3", "2")},
		{"object ahead is fine", single, app("3", "4", ""), healthyCond("True", "ReadyCondition", "ready")},
		{"no generation", single, app("", "2", ""), healthyCond("True", "ReadyCondition", "ready")},
		{"no observedGeneration", single, app("3", "", ""), healthyCond("True", "ReadyCondition", "ready")},
		{"non-integer observedGeneration is ignored", single, app("3", `"2"`, ""), healthyCond("True", "ReadyCondition", "ready")},
		{"stale condition", single, app("3", "", "2"), stale("3", "2")},
		{"current condition", single, app("3", "3", "3"), healthyCond("True", "ReadyCondition", "ready")},
		{"stale object under multiMatch", matchReady, app("3", "1", ""), stale("3", "1")},
		{"stale matched healthy condition", matchReady, app("3", "", "2"), stale("3", "2")},
		{"stale matched unhealthy condition", matchFailed, app("3", "", "2"), stale("3", "2")},
		{"fresh matched unhealthy condition", matchFailed, app("3", "", "3"),
			healthyCond("False", "MatchedCondition", "condition status: True, message: boom")},
		{"stale object under matchFields", matchField, app("3", "2", ""), stale("3", "2")},
		{"matchFields ignores condition generations", matchField, app("3", "", "2"),
			healthyCond("True", "MatchedField", "field value: True, message: ")},
		{"alwaysHealthy skips the check", &v1alpha1.HealthRule{AlwaysHealthy: &v1alpha1.AlwaysHealthyRule{}}, app("3", "1", "1"),
			healthyCond("True", "AlwaysHealthy", "")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assertCondition(t, tt.want, health.Evaluate(health.Input{Rule: tt.rule, Object: tt.obj, HasOutputs: true}))
		})
	}
}

func TestEvaluateTruncatesLongMessages(t *testing.T) {
	long := strings.Repeat("é", 40000) // 80000 bytes
	obj := &unstructured.Unstructured{Object: map[string]any{
		"kind": "App", "metadata": map[string]any{"name": "app"},
		"status": map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "False", "message": long}}},
	}}
	got := health.Evaluate(health.Input{Rule: &v1alpha1.HealthRule{SingleConditionType: "Ready"}, Object: obj})
	if len(got.Message) > 32768 || !strings.HasSuffix(got.Message, "...") {
		t.Fatalf("message of %d bytes, want at most 32768 ending in ...", len(got.Message))
	}
	if !strings.HasPrefix(got.Message, "éé") || strings.ContainsRune(got.Message, '\uFFFD') {
		t.Fatal("message was not cut at a rune boundary")
	}
}
