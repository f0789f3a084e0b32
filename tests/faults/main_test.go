// Package faults tests that Surveyor survives what DESIGN §6 promises it survives: being
// killed mid-convergence, an API server restart, losing its leader, and another writer
// fighting over a stamped field. Every test runs the built controller as a separate
// process (hack/cluster Launch), so it can be SIGKILLed and relaunched, and observes
// the result through the API server only.
//
// The tests share one cluster and one leader-election lease, so they run one after the
// other, and each stops the controllers it launched (SIGTERM releases the lease).
package faults

import (
	"context"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/internal/harness"
)

var (
	// ctx lives as long as the test binary.
	ctx context.Context
	// env is the running cluster with CRDs and RBAC; no controller runs until a test launches one.
	env *harness.Env
	// k8s is an admin client with a QPS high enough to create hundreds of Workloads quickly.
	k8s client.Client
)

func TestMain(m *testing.M) {
	harness.Main(m, harness.Options{BuildController: true, Ctx: &ctx, Env: &env, Client: &k8s, FastClient: true})
}

// eventually polls cond until it holds or timeout passes (see harness.Env.Eventually).
func eventually(t testing.TB, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	env.Eventually(ctx, t, timeout, cond)
}
