package realizer

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

func TestRetryDelay(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	failingFor := func(d time.Duration) *v1alpha1.OwnerStatus {
		return &v1alpha1.OwnerStatus{Conditions: []metav1.Condition{{
			Type: v1alpha1.ConditionResourcesSubmitted, Status: metav1.ConditionFalse, LastTransitionTime: metav1.NewTime(now.Add(-d)),
		}}}
	}
	tests := []struct {
		name string
		st   *v1alpha1.OwnerStatus
		want time.Duration
	}{
		{"no condition yet", &v1alpha1.OwnerStatus{}, time.Second},
		{"just failed", failingFor(0), time.Second},
		{"failing for 10s", failingFor(10 * time.Second), 10 * time.Second},
		{"failing for an hour", failingFor(time.Hour), time.Minute},
		{"a deletion pending for 5s, submitted an hour ago", &v1alpha1.OwnerStatus{
			Conditions:       []metav1.Condition{{Type: v1alpha1.ConditionResourcesSubmitted, Status: metav1.ConditionTrue, LastTransitionTime: metav1.NewTime(now.Add(-time.Hour))}},
			PendingDeletions: []v1alpha1.PendingDeletion{{Since: metav1.NewTime(now.Add(-5 * time.Second))}},
		}, 5 * time.Second},
		{"the newest failure counts", &v1alpha1.OwnerStatus{
			Conditions:       failingFor(30 * time.Second).Conditions,
			PendingDeletions: []v1alpha1.PendingDeletion{{Since: metav1.NewTime(now.Add(-time.Hour))}, {Since: metav1.NewTime(now.Add(-3 * time.Second))}},
		}, 3 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := retryDelay(tt.st, now); got != tt.want {
				t.Errorf("retryDelay = %s, want %s", got, tt.want)
			}
		})
	}
}
