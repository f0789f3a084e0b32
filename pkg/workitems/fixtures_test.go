package workitems_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/surveyor-dev/surveyor/internal/fixtures"
	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// ignoreTime compares conditions without their LastTransitionTime.
var ignoreTime = cmpopts.IgnoreFields(metav1.Condition{}, "LastTransitionTime")

// object builds an unstructured object from YAML, the way the API server's JSON decodes.
var object = fixtures.Object

// jobCondition is one entry of a Job's status.conditions.
type jobCondition struct{ typ, status, reason string }

// job builds a batch/v1 Job with the given conditions, in order.
func job(conds ...jobCondition) *unstructured.Unstructured {
	list := make([]any, 0, len(conds))
	for _, c := range conds {
		m := map[string]any{"type": c.typ, "status": c.status}
		if c.reason != "" {
			m["reason"] = c.reason
			m["message"] = "message of " + c.reason
		}
		list = append(list, m)
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "batch/v1",
		"kind":       "Job",
		"metadata":   map[string]any{"name": "run", "namespace": "dev"},
		"status":     map[string]any{"conditions": list},
	}}
}

// pod builds a v1 Pod with the given status.
func pod(status map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "Pod",
		"metadata":   map[string]any{"name": "once", "namespace": "dev"},
		"status":     status,
	}}
}

func cond(typ string, status metav1.ConditionStatus, reason, message string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: message}
}

func passed(typ, message string) metav1.Condition {
	return cond(typ, metav1.ConditionTrue, v1alpha1.ReasonConditionRulesPassed, message)
}

func failed(typ, message string) metav1.Condition {
	return cond(typ, metav1.ConditionFalse, v1alpha1.ReasonConditionRulesFailed, message)
}

func celRule(condition string, expressions ...string) v1alpha1.ConditionRule {
	r := v1alpha1.ConditionRule{Condition: condition, Type: v1alpha1.ConditionRuleTypeCEL}
	for _, e := range expressions {
		r.CELExpressions = append(r.CELExpressions, v1alpha1.CELConditionExpression{Expression: e})
	}
	return r
}

func wellKnownRule() v1alpha1.ConditionRule {
	return v1alpha1.ConditionRule{Type: v1alpha1.ConditionRuleTypeWellKnownCompletions}
}

// assertConditions compares conditions, ignoring LastTransitionTime. For each index in contains,
// the message is checked to hold every listed part instead of compared: for messages that quote
// package expr's error wording.
func assertConditions(t *testing.T, want, got []metav1.Condition, contains map[int][]string) {
	t.Helper()
	opts := []cmp.Option{ignoreTime, cmpopts.EquateEmpty()}
	if len(contains) > 0 {
		want, got = append([]metav1.Condition(nil), want...), append([]metav1.Condition(nil), got...)
		for i, parts := range contains {
			if i >= len(got) {
				continue
			}
			for _, p := range parts {
				if !strings.Contains(got[i].Message, p) {
					t.Errorf("condition %d message %q does not contain %q", i, got[i].Message, p)
				}
			}
			want[i].Message, got[i].Message = "", ""
		}
	}
	if diff := cmp.Diff(want, got, opts...); diff != "" {
		t.Errorf("conditions mismatch (-want +got):\n%s", diff)
	}
}
