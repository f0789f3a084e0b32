package workitems

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Job condition types of KEP-3998 (batch/v1 JobConditionType). SuccessCriteriaMet and
// FailureTarget are interim: the Job controller sets them as soon as the verdict is known, and adds
// Complete or Failed only after the Job's pods have terminated.
const (
	// JobSuccessCriteriaMet is the interim success condition: the Job met its success policy or
	// its completions.
	JobSuccessCriteriaMet = "SuccessCriteriaMet"
	// JobComplete is the terminal success condition.
	JobComplete = "Complete"
	// JobFailureTarget is the interim failure condition, e.g. for BackoffLimitExceeded.
	JobFailureTarget = "FailureTarget"
	// JobFailed is the terminal failure condition.
	JobFailed = "Failed"
)

// Pod phases that end a Pod's work.
const (
	podSucceeded = "Succeeded"
	podFailed    = "Failed"
)

// Verdict is a Job's or a Pod's own account of whether its work is over.
type Verdict struct {
	// Finished is whether the work is over, successfully or not. Both verdicts are complete.
	Finished bool
	// Succeeded is whether it ended successfully; false while not finished.
	Succeeded bool
	// Condition is the Job condition that decided: SuccessCriteriaMet, Complete, FailureTarget or
	// Failed. It is empty for a Pod and while not finished.
	Condition string
	// Reason is the deciding condition's reason, or a Pod's status.reason.
	Reason string
	// Message is the deciding condition's message, or a Pod's status.message.
	Message string
}

// JobVerdict reads a Job's verdict from status.conditions (KEP-3998). SuccessCriteriaMet=True or
// Complete=True means succeeded, FailureTarget=True or Failed=True means failed; any other status
// ("False", "Unknown") does not count. The interim conditions decide on their own: a Job with
// FailureTarget=True and no Failed yet has already failed, and is finished.
//
// The first verdict condition in status.conditions decides success or failure. The Job controller
// appends conditions, so this is the earliest verdict, and a later contradicting condition (which
// KEP-3998 forbids, but a hand-written status may hold) cannot flip it. Condition names the
// interim condition of that verdict when it is True, else the terminal one, so the named
// condition, too, stays the same as the Job moves from SuccessCriteriaMet to Complete or from
// FailureTarget to Failed.
func JobVerdict(obj *unstructured.Unstructured) Verdict {
	if obj == nil {
		return Verdict{}
	}
	var trueConds []map[string]any
	status, _ := obj.Object["status"].(map[string]any)
	conditions, _ := status["conditions"].([]any)
	for _, c := range conditions {
		if m, ok := c.(map[string]any); ok && str(m, "status") == string(metav1.ConditionTrue) {
			trueConds = append(trueConds, m)
		}
	}
	for _, c := range trueConds {
		var interim, terminal string
		switch str(c, "type") {
		case JobSuccessCriteriaMet, JobComplete:
			interim, terminal = JobSuccessCriteriaMet, JobComplete
		case JobFailureTarget, JobFailed:
			interim, terminal = JobFailureTarget, JobFailed
		default:
			continue
		}
		decided := c
		for _, want := range []string{interim, terminal} {
			if d := findType(trueConds, want); d != nil {
				decided = d
				break
			}
		}
		return Verdict{
			Finished:  true,
			Succeeded: terminal == JobComplete,
			Condition: str(decided, "type"),
			Reason:    str(decided, "reason"),
			Message:   str(decided, "message"),
		}
	}
	return Verdict{}
}

// PodVerdict reads a Pod's verdict from status.phase: Succeeded or Failed is finished, any other
// phase is not. Reason and Message are the Pod's status.reason and status.message.
func PodVerdict(obj *unstructured.Unstructured) Verdict {
	if obj == nil {
		return Verdict{}
	}
	status, _ := obj.Object["status"].(map[string]any)
	v := Verdict{Reason: str(status, "reason"), Message: str(status, "message")}
	switch str(status, "phase") {
	case podSucceeded:
		v.Finished, v.Succeeded = true, true
	case podFailed:
		v.Finished = true
	}
	return v
}

// wellKnown is a WellKnownCompletions rule for condition type cond. It reports false for a kind it
// does not know.
func wellKnown(obj *unstructured.Unstructured, cond string) (metav1.Condition, bool) {
	gvk := obj.GroupVersionKind()
	switch {
	case gvk.Group == "batch" && gvk.Kind == "Job":
		v := JobVerdict(obj)
		switch {
		case !v.Finished:
			return failed("Job is not " + cond), true
		case v.Succeeded:
			return passed("Job succeeded: " + named(v.Condition, v.Reason)), true
		default:
			return passed("Job failed: " + named(v.Condition, v.Reason)), true
		}
	case gvk.Group == "" && gvk.Kind == "Pod":
		v := PodVerdict(obj)
		switch {
		case v.Succeeded:
			return passed("Pod succeeded"), true
		case v.Finished:
			return passed("Pod failed" + podDetail(v)), true
		}
		msg := "Pod is not " + cond
		if phase := str(obj.Object["status"], "phase"); phase != "" {
			msg += " (phase " + phase + ")"
		}
		return failed(msg), true
	}
	return failed(fmt.Sprintf("WellKnownCompletions does not know kind %s (%s); use a CEL rule",
		obj.GetKind(), obj.GetAPIVersion())), false
}

// named is "Condition (Reason)", or the condition alone when it has no reason.
func named(condition, reason string) string {
	if reason == "" {
		return condition
	}
	return condition + " (" + reason + ")"
}

// podDetail is ": Reason (Message)", ": Reason", ": Message" or nothing.
func podDetail(v Verdict) string {
	switch {
	case v.Reason != "" && v.Message != "":
		return ": " + v.Reason + " (" + v.Message + ")"
	case v.Reason != "":
		return ": " + v.Reason
	case v.Message != "":
		return ": " + v.Message
	}
	return ""
}

func findType(conds []map[string]any, t string) map[string]any {
	for _, c := range conds {
		if str(c, "type") == t {
			return c
		}
	}
	return nil
}

// str reads a string field of a JSON object; anything else is "".
func str(obj any, key string) string {
	m, _ := obj.(map[string]any)
	s, _ := m[key].(string)
	return s
}
