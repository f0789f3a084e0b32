package apierr

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestTransient(t *testing.T) {
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
		{"cluster-scoped", fmt.Errorf("%w: Namespace", ErrNotStampable), false},
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
			if got := Transient(tt.err); got != tt.want {
				t.Errorf("Transient(%v) = %t, want %t", tt.err, got, tt.want)
			}
		})
	}
}
