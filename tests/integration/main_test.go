// Package integration tests Surveyor against the real local control plane of
// hack/cluster: etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok,
// with the realizer running in-process as its own ServiceAccount.
package integration

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/hack/cluster"
	"github.com/surveyor-dev/surveyor/tests/harness"
)

var (
	// ctx lives as long as the test binary.
	ctx context.Context
	// env is the running cluster with CRDs, RBAC and the controller.
	env *harness.Env
	// k8sClient is env's admin client.
	k8sClient client.Client
	// testCluster is env's control plane.
	testCluster *cluster.Cluster
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
	k8sClient, testCluster = env.Client, env.Cluster
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
