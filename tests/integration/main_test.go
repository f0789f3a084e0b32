// Package integration tests Surveyor against the real local control plane of
// hack/cluster: etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok,
// with the realizer running in-process as its own ServiceAccount.
package integration

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
	// k8sClient is env's admin client.
	k8sClient client.Client
)

func TestMain(m *testing.M) {
	harness.Main(m, harness.Options{Controller: true, Ctx: &ctx, Env: &env, Client: &k8sClient})
}

// eventually polls cond until it holds or timeout passes (see harness.Env.Eventually).
func eventually(t *testing.T, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	env.Eventually(ctx, t, timeout, cond)
}
