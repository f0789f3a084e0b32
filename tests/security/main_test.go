// Package security tests Surveyor's security boundaries end to end on the local cluster:
// stamping impersonates the Workload's ServiceAccount and cannot leave its namespace or
// touch cluster-scoped kinds, the controller's own role grants no wildcard writes,
// Secret data never reaches status, CEL cost limits always apply, and the metrics
// endpoint answers only callers allowed to get /metrics. The realizer runs
// in-process as the controller's own ServiceAccount, so its generated RBAC is what is
// tested.
package security

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
	// env is the running cluster with CRDs, RBAC and the controller.
	env *harness.Env
	// k8s is env's admin client.
	k8s client.Client
)

func TestMain(m *testing.M) {
	harness.Main(m, harness.Options{Controller: true, Ctx: &ctx, Env: &env, Client: &k8s})
}

// eventually polls cond until it holds or timeout passes (see harness.Env.Eventually).
func eventually(t *testing.T, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	env.Eventually(ctx, t, timeout, cond)
}
