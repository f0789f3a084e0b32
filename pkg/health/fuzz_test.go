package health_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/health"
)

// FuzzHealthMatchFields judges arbitrary objects under a multiMatch rule whose healthy
// side is one arbitrary matchFields requirement. Evaluate must never panic; a rule that
// Validate accepts must never be reported as InvalidHealthRule; the condition must be a
// valid one (status, reason, message within the API's limit); and, for a key that
// parses, Exists and DoesNotExist must be complementary.
//
// Seeds live in testdata/fuzz/FuzzHealthMatchFields; run with
//
//	go test -run XXX -fuzz '^FuzzHealthMatchFields$' -fuzztime 10s ./pkg/health
func FuzzHealthMatchFields(f *testing.F) {
	cm := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","generation":1},"data":{"ready":"yes","n":"3"},` +
		`"status":{"phase":"Running","replicas":3,"ok":true,"conditions":[{"type":"Ready","status":"True","message":"fine"}]}}`
	f.Add("data.ready", "In", "yes", "data.n", cm)
	f.Add("status.replicas", "In", "3", "status.conditions[0].message", cm)
	f.Add("status.ok", "NotIn", "false", "", cm)
	f.Add("status.conditions[?(@.type=='Ready')].status", "In", "True", "status.conditions[?(@.type=='Ready')].message", cm)
	f.Add("data.*", "Exists", "", "nowhere.at.all", cm)
	f.Add("status.[", "Exists", "", "", cm)
	f.Add("data.ready", "DoesNotExist", "", "status.[", cm)
	f.Add("{range .status.conditions[*]}{.type}{end}", "In", "Ready", "", cm)
	f.Add("$", "Equals", "", "", `{"metadata":{"generation":2},"status":{"observedGeneration":1}}`)
	f.Add("a", "In", "", "", `[1,2]`)

	f.Fuzz(func(t *testing.T, key, operator, value, messagePath, objectJSON string) {
		var content map[string]any
		if err := utiljson.Unmarshal([]byte(objectJSON), &content); err != nil || content == nil {
			content = map[string]any{"kind": "ConfigMap", "data": map[string]any{"ready": "yes"}}
		}
		var values []string
		if value != "" {
			values = []string{value}
		}
		rule := func(op v1alpha1.FieldSelectorOperator) *v1alpha1.HealthRule {
			return &v1alpha1.HealthRule{MultiMatch: &v1alpha1.MultiMatchRule{
				Healthy: v1alpha1.MatchRule{MatchFields: []v1alpha1.HealthMatchFieldSelectorRequirement{{
					FieldSelectorRequirement: v1alpha1.FieldSelectorRequirement{Key: key, Operator: op, Values: values},
					MessagePath:              messagePath,
				}}},
				Unhealthy: v1alpha1.MatchRule{MatchConditions: []v1alpha1.ConditionRequirement{{Type: "NeverSet.example.com", Status: "True"}}},
			}}
		}
		judge := func(op v1alpha1.FieldSelectorOperator) (metav1.Condition, bool) {
			r := rule(op)
			valid := health.Validate(r, health.FieldHealthyConditionRule) == nil
			obj := &unstructured.Unstructured{Object: content}
			c := health.Evaluate(health.Input{Rule: r, Object: obj, HasOutputs: true, OutputsRead: true})
			switch c.Status {
			case metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionUnknown:
			default:
				t.Fatalf("status %q", c.Status)
			}
			if c.Type != v1alpha1.ConditionHealthy || c.Reason == "" {
				t.Fatalf("condition %+v has no type or reason", c)
			}
			if len(c.Message) > 32768 {
				t.Fatalf("message of %d bytes is over the API's limit", len(c.Message))
			}
			if valid && c.Reason == v1alpha1.ReasonInvalidHealthRule {
				t.Fatalf("Validate accepted the rule but Evaluate says %s: %s", c.Reason, c.Message)
			}
			return c, valid
		}
		judge(v1alpha1.FieldSelectorOperator(operator))

		values = nil
		exists, ok1 := judge(v1alpha1.FieldSelectorOpExists)
		missing, ok2 := judge(v1alpha1.FieldSelectorOpDoesNotExist)
		if !ok1 || !ok2 || exists.Reason == v1alpha1.ReasonLatestGenerationNotObserved {
			return
		}
		if (exists.Status == metav1.ConditionTrue) == (missing.Status == metav1.ConditionTrue) {
			t.Fatalf("key %q: Exists gives %s %s and DoesNotExist gives %s %s", key, exists.Status, exists.Message, missing.Status, missing.Message)
		}
	})
}
