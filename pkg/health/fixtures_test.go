package health_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/surveyor-dev/surveyor/internal/fixtures"
	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// ignoreTime compares conditions without their LastTransitionTime.
var ignoreTime = cmpopts.IgnoreFields(metav1.Condition{}, "LastTransitionTime")

func assertCondition(t *testing.T, want, got metav1.Condition) {
	t.Helper()
	if diff := cmp.Diff(want, got, ignoreTime); diff != "" {
		t.Errorf("condition mismatch (-want +got):\n%s", diff)
	}
}

// The objects the tests judge, shared with package expr's tests.
var (
	object     = fixtures.Object
	deployment = fixtures.Deployment
	job        = fixtures.Job
)

func multiMatch(healthy, unhealthy v1alpha1.MatchRule) *v1alpha1.HealthRule {
	return &v1alpha1.HealthRule{MultiMatch: &v1alpha1.MultiMatchRule{Healthy: healthy, Unhealthy: unhealthy}}
}

func field(key string, op v1alpha1.FieldSelectorOperator, values ...string) v1alpha1.HealthMatchFieldSelectorRequirement {
	return v1alpha1.HealthMatchFieldSelectorRequirement{
		FieldSelectorRequirement: v1alpha1.FieldSelectorRequirement{Key: key, Operator: op, Values: values},
	}
}

func withMessage(f v1alpha1.HealthMatchFieldSelectorRequirement, messagePath string) v1alpha1.HealthMatchFieldSelectorRequirement {
	f.MessagePath = messagePath
	return f
}
