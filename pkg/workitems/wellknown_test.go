package workitems_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/workitems"
)

func TestJobVerdict(t *testing.T) {
	const (
		scm = workitems.JobSuccessCriteriaMet
		cpl = workitems.JobComplete
		ft  = workitems.JobFailureTarget
		fl  = workitems.JobFailed
	)
	succeeded := func(c, reason string) workitems.Verdict {
		return workitems.Verdict{Finished: true, Succeeded: true, Condition: c, Reason: reason, Message: "message of " + reason}
	}
	failedBy := func(c, reason string) workitems.Verdict {
		return workitems.Verdict{Finished: true, Condition: c, Reason: reason, Message: "message of " + reason}
	}
	tests := []struct {
		name string
		job  *unstructured.Unstructured
		want workitems.Verdict
	}{
		{name: "nil object", job: nil},
		{name: "no conditions", job: job()},
		{name: "running, suspended", job: job(jobCondition{"Suspended", "True", "JobSuspended"})},
		{name: "interim SuccessCriteriaMet without Complete is already succeeded",
			job:  job(jobCondition{scm, "True", "CompletionsReached"}),
			want: succeeded(scm, "CompletionsReached")},
		{name: "SuccessCriteriaMet then Complete names the interim condition",
			job:  job(jobCondition{scm, "True", "SuccessPolicy"}, jobCondition{cpl, "True", "SuccessPolicy"}),
			want: succeeded(scm, "SuccessPolicy")},
		{name: "Complete listed before SuccessCriteriaMet still names the interim condition",
			job:  job(jobCondition{cpl, "True", "CompletionsReached"}, jobCondition{scm, "True", "SuccessPolicy"}),
			want: succeeded(scm, "SuccessPolicy")},
		{name: "Complete alone (no success policy, older cluster)",
			job:  job(jobCondition{cpl, "True", "CompletionsReached"}),
			want: succeeded(cpl, "CompletionsReached")},
		{name: "interim FailureTarget without Failed is already failed",
			job:  job(jobCondition{ft, "True", "BackoffLimitExceeded"}),
			want: failedBy(ft, "BackoffLimitExceeded")},
		{name: "FailureTarget then Failed names the interim condition",
			job:  job(jobCondition{ft, "True", "BackoffLimitExceeded"}, jobCondition{fl, "True", "BackoffLimitExceeded"}),
			want: failedBy(ft, "BackoffLimitExceeded")},
		{name: "Failed alone",
			job:  job(jobCondition{fl, "True", "DeadlineExceeded"}),
			want: failedBy(fl, "DeadlineExceeded")},
		{name: "status False does not count",
			job: job(jobCondition{scm, "False", "X"}, jobCondition{cpl, "False", "X"},
				jobCondition{ft, "False", "X"}, jobCondition{fl, "False", "X"})},
		{name: "status Unknown does not count",
			job: job(jobCondition{cpl, "Unknown", "X"}, jobCondition{fl, "Unknown", "X"})},
		{name: "lowercase true does not count",
			job: job(jobCondition{cpl, "true", "X"})},
		{name: "a False failure condition does not stop a True success",
			job:  job(jobCondition{ft, "False", "X"}, jobCondition{cpl, "True", "CompletionsReached"}),
			want: succeeded(cpl, "CompletionsReached")},
		{name: "both verdicts: FailureTarget first wins",
			job:  job(jobCondition{ft, "True", "PodFailurePolicy"}, jobCondition{scm, "True", "SuccessPolicy"}),
			want: failedBy(ft, "PodFailurePolicy")},
		{name: "both verdicts: SuccessCriteriaMet first wins",
			job:  job(jobCondition{scm, "True", "SuccessPolicy"}, jobCondition{fl, "True", "BackoffLimitExceeded"}),
			want: succeeded(scm, "SuccessPolicy")},
		{name: "both verdicts: Complete first wins over a later FailureTarget",
			job: job(jobCondition{cpl, "True", "CompletionsReached"}, jobCondition{ft, "True", "BackoffLimitExceeded"},
				jobCondition{fl, "True", "BackoffLimitExceeded"}),
			want: succeeded(cpl, "CompletionsReached")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, workitems.JobVerdict(tc.job)); diff != "" {
				t.Errorf("verdict mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestJobVerdictIgnoresMalformedConditions(t *testing.T) {
	j := job()
	j.Object["status"] = map[string]any{"conditions": []any{
		"Complete", 42, map[string]any{"type": "Complete"}, map[string]any{"type": 1, "status": "True"},
		map[string]any{"type": "Failed", "status": "True"},
	}}
	want := workitems.Verdict{Finished: true, Condition: workitems.JobFailed}
	if diff := cmp.Diff(want, workitems.JobVerdict(j)); diff != "" {
		t.Errorf("verdict mismatch (-want +got):\n%s", diff)
	}
}

func TestPodVerdict(t *testing.T) {
	tests := []struct {
		name string
		pod  *unstructured.Unstructured
		want workitems.Verdict
	}{
		{name: "nil object", pod: nil},
		{name: "no status", pod: pod(nil)},
		{name: "pending", pod: pod(map[string]any{"phase": "Pending"})},
		{name: "running", pod: pod(map[string]any{"phase": "Running"})},
		{name: "unknown phase", pod: pod(map[string]any{"phase": "Unknown"})},
		{name: "succeeded", pod: pod(map[string]any{"phase": "Succeeded"}),
			want: workitems.Verdict{Finished: true, Succeeded: true}},
		{name: "failed with reason and message",
			pod:  pod(map[string]any{"phase": "Failed", "reason": "Evicted", "message": "low on memory"}),
			want: workitems.Verdict{Finished: true, Reason: "Evicted", Message: "low on memory"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, workitems.PodVerdict(tc.pod)); diff != "" {
				t.Errorf("verdict mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEvaluateWellKnownCompletions(t *testing.T) {
	const complete = v1alpha1.ConditionComplete
	finished := v1alpha1.ConditionRule{Condition: "Finished", Type: v1alpha1.ConditionRuleTypeWellKnownCompletions}
	withMessage := wellKnownRule()
	withMessage.MessageExpression = "'job ' + object.metadata.name + ' done: ' + string(object.status.conditions.exists(c, c.status == 'True'))"
	deployment := object(t, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: app}
status: {conditions: [{type: Available, status: "True"}]}
`)
	tests := []struct {
		name string
		rule v1alpha1.ConditionRule
		obj  *unstructured.Unstructured
		want metav1.Condition
	}{
		{name: "job running", rule: wellKnownRule(), obj: job(),
			want: failed(complete, "Job is not Complete")},
		{name: "job interim success", rule: wellKnownRule(),
			obj:  job(jobCondition{workitems.JobSuccessCriteriaMet, "True", "CompletionsReached"}),
			want: passed(complete, "Job succeeded: SuccessCriteriaMet (CompletionsReached)")},
		{name: "job terminal success", rule: wellKnownRule(),
			obj:  job(jobCondition{workitems.JobComplete, "True", ""}),
			want: passed(complete, "Job succeeded: Complete")},
		{name: "job interim failure is complete", rule: wellKnownRule(),
			obj:  job(jobCondition{workitems.JobFailureTarget, "True", "BackoffLimitExceeded"}),
			want: passed(complete, "Job failed: FailureTarget (BackoffLimitExceeded)")},
		{name: "job terminal failure", rule: wellKnownRule(),
			obj: job(jobCondition{workitems.JobFailureTarget, "True", "DeadlineExceeded"},
				jobCondition{workitems.JobFailed, "True", "DeadlineExceeded"}),
			want: passed(complete, "Job failed: FailureTarget (DeadlineExceeded)")},
		{name: "job with status False conditions", rule: wellKnownRule(),
			obj:  job(jobCondition{workitems.JobFailed, "False", "X"}, jobCondition{workitems.JobComplete, "Unknown", "Y"}),
			want: failed(complete, "Job is not Complete")},
		{name: "custom condition type", rule: finished, obj: job(),
			want: failed("Finished", "Job is not Finished")},
		{name: "custom condition type, finished", rule: finished, obj: job(jobCondition{workitems.JobComplete, "True", "CompletionsReached"}),
			want: passed("Finished", "Job succeeded: Complete (CompletionsReached)")},
		{name: "pod pending", rule: wellKnownRule(), obj: pod(map[string]any{"phase": "Pending"}),
			want: failed(complete, "Pod is not Complete (phase Pending)")},
		{name: "pod without status", rule: wellKnownRule(), obj: pod(nil),
			want: failed(complete, "Pod is not Complete")},
		{name: "pod succeeded", rule: wellKnownRule(), obj: pod(map[string]any{"phase": "Succeeded"}),
			want: passed(complete, "Pod succeeded")},
		{name: "pod failed", rule: wellKnownRule(), obj: pod(map[string]any{"phase": "Failed"}),
			want: passed(complete, "Pod failed")},
		{name: "pod failed with reason and message", rule: wellKnownRule(),
			obj:  pod(map[string]any{"phase": "Failed", "reason": "Evicted", "message": "The node was low on memory."}),
			want: passed(complete, "Pod failed: Evicted (The node was low on memory.)")},
		{name: "pod failed with message only", rule: wellKnownRule(),
			obj:  pod(map[string]any{"phase": "Failed", "message": "exit 1"}),
			want: passed(complete, "Pod failed: exit 1")},
		{name: "unknown kind", rule: wellKnownRule(), obj: deployment,
			want: failed(complete, "WellKnownCompletions does not know kind Deployment (apps/v1); use a CEL rule")},
		{name: "a Job of another group is not a batch Job", rule: wellKnownRule(),
			obj:  object(t, "{apiVersion: example.com/v1, kind: Job, metadata: {name: j}}"),
			want: failed(complete, "WellKnownCompletions does not know kind Job (example.com/v1); use a CEL rule")},
		{name: "messageExpression replaces a verdict's message", rule: withMessage,
			obj:  job(jobCondition{workitems.JobComplete, "True", "CompletionsReached"}),
			want: passed(complete, "job run done: true")},
		{name: "messageExpression replaces a not-finished message", rule: withMessage, obj: job(),
			want: failed(complete, "job run done: false")},
		{name: "messageExpression does not hide an unknown kind", rule: withMessage, obj: deployment,
			want: failed(complete, "WellKnownCompletions does not know kind Deployment (apps/v1); use a CEL rule")},
		{name: "no object", rule: wellKnownRule(), obj: nil,
			want: cond(complete, metav1.ConditionUnknown, v1alpha1.ReasonNoStampedObject, workitems.MessageNoObject)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := workitems.Evaluate([]v1alpha1.ConditionRule{tc.rule}, tc.obj, nil)
			assertConditions(t, []metav1.Condition{tc.want}, got, nil)
		})
	}
}
