// Package security tests Surveyor's security boundaries end to end on the local cluster:
// stamping impersonates the Workload's ServiceAccount and cannot leave its namespace or
// touch cluster-scoped kinds, the controller's own role grants no wildcard writes,
// Secret data never reaches status, and CEL cost limits always apply. The realizer runs
// in-process as the controller's own ServiceAccount, so its generated RBAC is what is
// tested.
package security

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/tests/harness"
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
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var cancel context.CancelFunc
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	var err error
	if env, err = harness.Start(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer env.Stop()
	k8s = env.Client
	if err := env.StartController(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "starting the controller:", err)
		return 1
	}
	return m.Run()
}

// eventually polls cond until it holds or timeout passes (see harness.Env.Eventually).
func eventually(t *testing.T, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	env.Eventually(ctx, t, timeout, cond)
}
