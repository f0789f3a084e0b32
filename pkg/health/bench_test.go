package health_test

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/expr"
	"github.com/surveyor-dev/surveyor/pkg/health"
)

// benchEvaluate evaluates rule against obj b.N times, one fresh Scope per evaluation as a reconcile
// does, and fails when anything is compiled or parsed after the first evaluation.
func benchEvaluate(b *testing.B, obj *unstructured.Unstructured, rule *v1alpha1.HealthRule, want metav1.ConditionStatus) {
	b.Helper()
	if err := health.Validate(rule, health.FieldHealthyConditionRule); err != nil {
		b.Fatal(err)
	}
	first := health.Evaluate(health.Input{Rule: rule, Object: obj, HasOutputs: true, OutputsRead: true})
	if first.Status != want {
		b.Fatalf("status %s, want %s: %+v", first.Status, want, first)
	}
	compiles, parses := expr.CELCompileCount(), expr.PathParseCount()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		health.Evaluate(health.Input{Rule: rule, Object: obj, HasOutputs: true, OutputsRead: true})
	}
	b.StopTimer()
	c, p := expr.CELCompileCount()-compiles, expr.PathParseCount()-parses
	b.ReportMetric(float64(c), "compiles")
	b.ReportMetric(float64(p), "parses")
	if c != 0 || p != 0 {
		b.Fatalf("steady state compiled %d expressions and parsed %d paths, want none", c, p)
	}
}

type evaluateBenchmark struct {
	name string
	obj  *unstructured.Unstructured
	rule *v1alpha1.HealthRule
	want metav1.ConditionStatus
}

// BenchmarkEvaluate evaluates typical rules over objects without a uid and resourceVersion, so
// that every CEL expression is evaluated every time.
func BenchmarkEvaluate(b *testing.B) {
	for _, bm := range evaluateBenchmarks(b) {
		b.Run(bm.name, func(b *testing.B) { benchEvaluate(b, bm.obj, bm.rule, bm.want) })
	}
}

// BenchmarkEvaluateUnchanged evaluates BenchmarkEvaluate's CEL rules over objects as an API
// server returns them, with a uid and resourceVersion, that have not changed since they were
// last evaluated: a reconcile's steady state, where CEL results come from expr's memo.
func BenchmarkEvaluateUnchanged(b *testing.B) {
	for _, bm := range evaluateBenchmarks(b) {
		if !strings.Contains(bm.name, "CEL") {
			continue
		}
		obj := bm.obj.DeepCopy()
		obj.SetUID(types.UID("unchanged-" + bm.name))
		obj.SetResourceVersion("1")
		b.Run(bm.name, func(b *testing.B) { benchEvaluate(b, obj, bm.rule, bm.want) })
	}
}

func evaluateBenchmarks(b *testing.B) []evaluateBenchmark {
	dep, jb := deployment(b), job(b)
	stale := deployment(b)
	stale.SetGeneration(4)
	return []evaluateBenchmark{
		{"NoRule/Deployment", dep, nil, metav1.ConditionTrue},
		{"AlwaysHealthy/Deployment", dep, &v1alpha1.HealthRule{AlwaysHealthy: &v1alpha1.AlwaysHealthyRule{}}, metav1.ConditionTrue},
		{"SingleConditionType/Deployment", dep, &v1alpha1.HealthRule{SingleConditionType: "Available"}, metav1.ConditionTrue},
		{"SingleConditionType/Job", jb, &v1alpha1.HealthRule{SingleConditionType: "Complete"}, metav1.ConditionTrue},
		{"SingleConditionType/StaleDeployment", stale, &v1alpha1.HealthRule{SingleConditionType: "Available"}, metav1.ConditionUnknown},
		{"MultiMatchConditions/Deployment", dep, multiMatch(
			v1alpha1.MatchRule{MatchConditions: []v1alpha1.ConditionRequirement{{Type: "Available", Status: "True"}, {Type: "Progressing", Status: "True"}}},
			v1alpha1.MatchRule{MatchConditions: []v1alpha1.ConditionRequirement{{Type: "ReplicaFailure", Status: "True"}, {Type: "Available", Status: "False"}}},
		), metav1.ConditionTrue},
		{"MultiMatchConditions/Job", jb, multiMatch(
			v1alpha1.MatchRule{MatchConditions: []v1alpha1.ConditionRequirement{{Type: "Complete", Status: "True"}}},
			v1alpha1.MatchRule{MatchConditions: []v1alpha1.ConditionRequirement{{Type: "Failed", Status: "True"}, {Type: "FailureTarget", Status: "True"}}},
		), metav1.ConditionTrue},
		{"MultiMatchFields/Deployment", dep, multiMatch(
			v1alpha1.MatchRule{MatchFields: []v1alpha1.HealthMatchFieldSelectorRequirement{
				field(`status.conditions[?(@.type=="Available")].status`, v1alpha1.FieldSelectorOpIn, "True"),
			}},
			v1alpha1.MatchRule{MatchFields: []v1alpha1.HealthMatchFieldSelectorRequirement{
				field(`.status.conditions[?(@.type=="ReplicaFailure")].status`, v1alpha1.FieldSelectorOpIn, "True"),
			}},
		), metav1.ConditionTrue},
		{"MultiMatchFieldsSimple/Job", jb, multiMatch(
			v1alpha1.MatchRule{MatchFields: []v1alpha1.HealthMatchFieldSelectorRequirement{
				withMessage(field("status.succeeded", v1alpha1.FieldSelectorOpIn, "8"), "{.status.completedIndexes}"),
			}},
			v1alpha1.MatchRule{MatchFields: []v1alpha1.HealthMatchFieldSelectorRequirement{
				field("status.failed", v1alpha1.FieldSelectorOpNotIn, "0"),
			}},
		), metav1.ConditionTrue},
		{"MultiMatchCEL/Deployment", dep, multiMatch(
			v1alpha1.MatchRule{MatchCEL: []v1alpha1.CELMatch{{
				Expression: `object.status.conditions.exists(c, c.type == "Available" && c.status == "True")`,
			}}},
			v1alpha1.MatchRule{MatchCEL: []v1alpha1.CELMatch{{
				Expression: `object.status.conditions.exists(c, c.type == "ReplicaFailure" && c.status == "True")`,
			}}},
		), metav1.ConditionTrue},
		{"MultiMatchCELMessage/Job", jb, multiMatch(
			v1alpha1.MatchRule{MatchCEL: []v1alpha1.CELMatch{{
				Expression:        `object.status.succeeded >= object.spec.completions`,
				MessageExpression: `"succeeded: " + string(object.status.succeeded)`,
			}}},
			v1alpha1.MatchRule{MatchCEL: []v1alpha1.CELMatch{{
				Expression: `object.?status.failed.orValue(0) > 0`,
			}}},
		), metav1.ConditionTrue},
		{"MultiMatchCELIndexes/Job", jb, multiMatch(
			v1alpha1.MatchRule{MatchCEL: []v1alpha1.CELMatch{{
				Expression: `size(indexes(object.status.completedIndexes)) == object.spec.completions`,
			}}},
			v1alpha1.MatchRule{MatchCEL: []v1alpha1.CELMatch{{
				Expression: `has(object.status.failedIndexes) && size(indexes(object.status.failedIndexes)) > 0`,
			}}},
		), metav1.ConditionTrue},
	}
}

func BenchmarkOwner(b *testing.B) {
	healthy := metav1.Condition{Type: "Healthy", Status: "True", Reason: "MatchedCondition"}
	bad := metav1.Condition{Type: "Healthy", Status: "False", Reason: "MatchedCondition", Message: "crashloop"}
	resources := []health.ResourceCondition{
		{Name: "source-provider", Condition: &healthy}, {Name: "image-builder", Condition: &healthy},
		{Name: "config-provider", Condition: &healthy}, {Name: "deployer", Condition: &bad},
	}
	b.ReportAllocs()
	for b.Loop() {
		rh := health.ResourcesHealthy(4, resources)
		health.OwnerReady(health.OwnerReadyInput{Generation: 4, BlueprintReady: &healthy, ResourcesSubmitted: &healthy, ResourcesHealthy: &rh, AllCurrent: true})
		health.Available(health.AvailableInput{ResourcesHealthy: &rh, Generation: 4, AllCurrent: true})
	}
}
