package workitems_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/workitems"
)

// completedJobYAML is an Indexed Job that succeeded (KEP-3998 conditions).
const completedJobYAML = `
apiVersion: batch/v1
kind: Job
metadata: {name: shards, namespace: dev, generation: 1}
spec: {completions: 4, completionMode: Indexed}
status:
  completedIndexes: "0-3"
  succeeded: 4
  conditions:
  - {type: SuccessCriteriaMet, status: "True", reason: CompletionsReached, message: Reached expected number of succeeded pods}
  - {type: Complete, status: "True", reason: CompletionsReached, message: Reached expected number of succeeded pods}
`

// BenchmarkEvaluate judges a Job under typical condition rules, one fresh scope per evaluation as
// a reconcile does.
func BenchmarkEvaluate(b *testing.B) {
	obj := object(b, completedJobYAML)
	withMessage := celRule(v1alpha1.ConditionComplete, `object.status.succeeded >= object.spec.completions`)
	withMessage.MessageExpression = `"succeeded: " + string(object.status.succeeded)`
	benchmarks := []struct {
		name  string
		rules []v1alpha1.ConditionRule
		want  metav1.ConditionStatus
	}{
		{"WellKnownCompletions/Job", []v1alpha1.ConditionRule{wellKnownRule()}, metav1.ConditionTrue},
		{"CEL/Job", []v1alpha1.ConditionRule{celRule(v1alpha1.ConditionComplete,
			`object.status.conditions.exists(c, c.type == "Complete" && c.status == "True")`)}, metav1.ConditionTrue},
		{"CELMessage/Job", []v1alpha1.ConditionRule{withMessage}, metav1.ConditionTrue},
		{"CELMap/Job", []v1alpha1.ConditionRule{celRule("Verified",
			`{"status": size(indexes(object.status.completedIndexes)) == object.spec.completions, "reason": "IndexesCompleted", "message": object.status.completedIndexes}`)},
			metav1.ConditionTrue},
	}
	for _, bm := range benchmarks {
		b.Run(bm.name, func(b *testing.B) {
			if got := workitems.Evaluate(bm.rules, obj, nil); len(got) != 1 || got[0].Status != bm.want {
				b.Fatalf("conditions %+v, want one %s", got, bm.want)
			}
			b.ReportAllocs()
			for b.Loop() {
				workitems.Evaluate(bm.rules, obj, nil)
			}
		})
	}
}
