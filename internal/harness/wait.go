package harness

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// Eventually polls cond every 200ms until it returns true or timeout passes, then
// fails the test with the last observation cond reported.
func (e *Env) Eventually(ctx context.Context, t testing.TB, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		ok, observed := cond()
		last = observed
		return ok, nil
	})
	if err != nil {
		e.logController(t)
		t.Fatalf("condition not met within %s; last observed: %s", timeout, last)
	}
}

// Consistently checks cond at once, every interval and once more when window ends, and
// fails the test the first time cond returns false, with what cond observed. It is how a
// test proves that something does not happen (an object is not created, a controller
// does not exit, nothing is retried): the caller says in a comment why the window is
// long enough to see it if it did.
func (e *Env) Consistently(ctx context.Context, t testing.TB, window, interval time.Duration, cond func() (bool, string)) {
	t.Helper()
	start := time.Now()
	deadline := start.Add(window)
	for {
		if ok, observed := cond(); !ok {
			e.logController(t)
			t.Fatalf("%s into a %s window: %s", time.Since(start).Round(time.Millisecond), window, observed)
		}
		left := time.Until(deadline)
		if left <= 0 {
			return
		}
		select {
		case <-time.After(min(interval, left)):
		case <-ctx.Done():
			t.Fatalf("interrupted %s into a %s window: %v", time.Since(start).Round(time.Millisecond), window, ctx.Err())
		}
	}
}

// logController logs what the in-process controller wrote, if it runs.
func (e *Env) logController(t testing.TB) {
	t.Helper()
	if log := e.Log.String(); log != "" {
		t.Logf("controller log:\n%s", log)
	}
}
