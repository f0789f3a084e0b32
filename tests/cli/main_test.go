// Package cli tests kubectl-carto against the local cluster of hack/cluster with the
// realizer running in-process: render stamps exactly what the controller stamped for
// every sample, and `get -A` over 1,000 Workloads is timed (BenchmarkGetAll).
package cli

import (
	"context"
	"testing"
	"time"

	"github.com/surveyor-dev/surveyor/internal/harness"
)

var (
	// ctx lives as long as the test binary.
	ctx context.Context
	// env is the running cluster with CRDs, RBAC and the controller.
	env *harness.Env
)

func TestMain(m *testing.M) {
	harness.Main(m, harness.Options{Controller: true, Ctx: &ctx, Env: &env})
}

func eventually(t testing.TB, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	env.Eventually(ctx, t, timeout, cond)
}
