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

// logController logs what the in-process controller wrote, if it runs.
func (e *Env) logController(t testing.TB) {
	t.Helper()
	if log := e.Log.String(); log != "" {
		t.Logf("controller log:\n%s", log)
	}
}
