package watch

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ErrKindSyncing is why an owner is not realized now: a kind it stamps is listing for the
// first time (e.g. after a restart), or has yet to answer a write in time while another
// write to it is in flight. Nothing is written meanwhile, neither objects nor status: an
// owner's status says what the cache saw, and a half-filled cache saw nothing. The owner
// is re-queued when the kind syncs, or when the write in flight ends.
var ErrKindSyncing = errors.New("a stamped kind is not ready for this owner yet")

// NotServedError is a stamped kind the API server does not serve right now: its
// discovery failed, or its informer could not list it. It is the API server's to fix
// (or the platform team's, by installing or repairing the kind), so the owner waits.
type NotServedError struct {
	gvk schema.GroupVersionKind
	err error
}

// Error names the kind that is not served, and why.
func (e *NotServedError) Error() string {
	return fmt.Sprintf("kind [%s] of [%s] is not served: %v", e.gvk.Kind, e.gvk.GroupVersion(), e.err)
}

// Unwrap is the API server's error, or the write's timeout.
func (e *NotServedError) Unwrap() error { return e.err }

// NotServed is the error of writing a gvk object when the kind is not served.
func NotServed(gvk schema.GroupVersionKind, err error) error {
	return &NotServedError{gvk: gvk, err: err}
}
