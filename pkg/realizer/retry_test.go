package realizer

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

func TestIsTransient(t *testing.T) {
	gr := schema.GroupResource{Group: "apps", Resource: "deployments"}
	status := func(code int32, reason metav1.StatusReason) error {
		return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: code, Reason: reason, Message: "m"}}
	}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"forbidden", apierrors.NewForbidden(gr, "x", errors.New("denied")), false},
		{"invalid", apierrors.NewInvalid(schema.GroupKind{Kind: "Deployment"}, "x", nil), false},
		{"bad request", apierrors.NewBadRequest("no"), false},
		{"not found", apierrors.NewNotFound(gr, "x"), false},
		{"method not allowed", apierrors.NewMethodNotSupported(gr, "create"), false},
		{"already exists", apierrors.NewAlreadyExists(gr, "x"), false},
		{"too large", apierrors.NewRequestEntityTooLargeError("big"), false},
		{"no kind match", &meta.NoKindMatchError{GroupKind: schema.GroupKind{Kind: "Widget"}}, false},
		{"cluster-scoped", fmt.Errorf("%w: Namespace", errNotStampable), false},
		// Server-side apply's type errors come back as a 500 without a reason.
		{"reasonless 500", status(http.StatusInternalServerError, metav1.StatusReasonUnknown), false},
		{"internal error", apierrors.NewInternalError(errors.New("etcd")), true},
		{"timeout", apierrors.NewTimeoutError("slow", 1), true},
		{"server timeout", apierrors.NewServerTimeout(gr, "get", 1), true},
		{"unavailable", apierrors.NewServiceUnavailable("down"), true},
		{"throttled", apierrors.NewTooManyRequests("slow down", 1), true},
		{"conflict", apierrors.NewConflict(gr, "x", errors.New("changed")), true},
		{"reasonless 502", status(http.StatusBadGateway, metav1.StatusReasonUnknown), true},
		{"reasonless 404", status(http.StatusNotFound, metav1.StatusReasonUnknown), false},
		{"no answer", context.DeadlineExceeded, true},
		{"wrapped", fmt.Errorf("applying: %w", apierrors.NewServiceUnavailable("down")), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := isTransient(tt.err); got != tt.want {
				t.Errorf("isTransient(%v) = %t, want %t", tt.err, got, tt.want)
			}
		})
	}
}

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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := retryDelay(tt.st, now); got != tt.want {
				t.Errorf("retryDelay = %s, want %s", got, tt.want)
			}
		})
	}
}
