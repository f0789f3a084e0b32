package apierr

import (
	"errors"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ErrNotStampable marks a kind no template may stamp (a cluster-scoped one): only the
// template can fix that, so it is not retried.
var ErrNotStampable = errors.New("not stampable")

// Transient tells API errors a retry may fix from those only the user can fix, by
// the API status's reason: the server's failures (internal errors, timeouts, throttling,
// an unavailable server) and errors that never reached it are transient.
func Transient(err error) bool {
	if errors.Is(err, ErrNotStampable) || meta.IsNoMatchError(err) {
		return false
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return true // the request did not get an answer: a network error or a timeout
	}
	switch status.Status().Reason {
	case metav1.StatusReasonInternalError, metav1.StatusReasonTimeout, metav1.StatusReasonServerTimeout,
		metav1.StatusReasonServiceUnavailable, metav1.StatusReasonTooManyRequests, metav1.StatusReasonConflict:
		return true
	case metav1.StatusReasonUnknown:
		// A reasonless 500 is an error the API server did not classify. Server-side apply
		// answers so when the object itself cannot be converted (a string where the
		// schema has a number, Secret data that is not base64): only the template can
		// fix that. Other reasonless server errors (a gateway's 502, 504) are transient.
		return status.Status().Code != http.StatusInternalServerError && status.Status().Code >= http.StatusInternalServerError
	}
	return false
}

// Message is the API server's own message for a status error.
func Message(err error) string {
	var status apierrors.APIStatus
	if errors.As(err, &status) && status.Status().Message != "" {
		return status.Status().Message
	}
	return err.Error()
}
