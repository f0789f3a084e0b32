package watch

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// writeTimeout bounds one write of a stamped object. The API server answers a write in
// milliseconds unless a webhook of the kind (conversion or admission) hangs, which can
// take it 30 s and more; the kind is then stalled (see beginWrite).
const writeTimeout = 5 * time.Second

// Backoff of a kind whose writes time out: the first write after minStallBackoff tries
// again, and each failure doubles the wait, up to maxStallBackoff.
const (
	minStallBackoff = 10 * time.Second
	maxStallBackoff = 5 * time.Minute
)

// Write runs one write of a gvk object for owner within writeTimeout, as beginWrite lets
// it (see there), and records its outcome (written). A write that timed out is reported as
// the kind not served.
func (w *Watcher) Write(ctx context.Context, gvk schema.GroupVersionKind, owner reconcile.Request, do func(context.Context) error) error {
	if err := w.beginWrite(gvk, owner); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, writeTimeout)
	defer cancel()
	err := do(ctx)
	w.written(gvk, err)
	if timedOut(err) {
		return &NotServedError{gvk: gvk, err: fmt.Errorf("a write timed out: %w", err)}
	}
	return err
}

// beginWrite lets a write to gvk for owner go, or says why not:
//   - while the kind's writes time out (it is stalled) and its next try is not due, a
//     *NotServedError, so that the owner reports it at once instead of holding a worker
//     until its own write times out; when a try is due, this write is it;
//   - while the kind has not answered a write in time yet and another write to it is in
//     flight, ErrKindSyncing: so when a kind's webhook hangs, one worker waits for it, not
//     every worker that reaches one of its owners. The owner is re-queued when that write
//     ends.
//
// Every write let go ends with written.
func (w *Watcher) beginWrite(gvk schema.GroupVersionKind, owner reconcile.Request) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	kw := w.kinds[gvk]
	switch {
	case kw == nil:
		return nil
	case kw.stalled != nil:
		now := time.Now()
		if now.Before(kw.retryAt) {
			return &NotServedError{gvk: gvk, err: fmt.Errorf("a write timed out: %w", kw.stalled)}
		}
		kw.retryAt = now.Add(writeTimeout + kw.backoff) // this write is the one try
	case !kw.proven && kw.inflight > 0:
		if kw.waiters == nil {
			kw.waiters = map[reconcile.Request]bool{}
		}
		kw.waiters[owner] = true
		return ErrKindSyncing
	}
	kw.inflight++
	return nil
}

// written records the outcome of a write to gvk that beginWrite let go: a timeout stalls
// the kind, with a backoff that doubles while writes keep timing out; an answer in time
// proves it, and ends a stall. Either way the owners waiting for the write are re-queued.
func (w *Watcher) written(gvk schema.GroupVersionKind, err error) {
	var answered apierrors.APIStatus
	w.mu.Lock()
	kw := w.kinds[gvk]
	if kw == nil {
		w.mu.Unlock()
		return
	}
	kw.inflight--
	switch {
	case timedOut(err):
		kw.backoff = min(max(2*kw.backoff, minStallBackoff), maxStallBackoff)
		kw.stalled, kw.retryAt, kw.proven = err, time.Now().Add(kw.backoff), false
	case err == nil || errors.As(err, &answered):
		kw.stalled, kw.backoff, kw.proven = nil, 0, true
	}
	waiters := kw.waiters
	kw.waiters = nil
	w.mu.Unlock()
	for owner := range waiters {
		w.queue.Add(owner)
	}
}

// timedOut says whether a write ran out of time, on either side.
func timedOut(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err)
}
