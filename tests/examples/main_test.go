// Package examples runs Cartographer v0.8.11's own examples (its module's examples/,
// rendered with ytt as their READMEs say) against Surveyor, on a cluster that holds the real
// CRDs of the tools they stamp: Flux source-controller, kpack, kapp-controller and Tekton,
// each taken from that project's Go module at the version pinned in hack/tools. None of
// those controllers runs: each test plays the tool by writing status through the status
// subresource the way its controller does, then asserts the status Surveyor reports.
//
// The examples share cluster-scoped names (ClusterSupplyChain supply-chain, ClusterSourceTemplate
// source, ...) and selectors, so the tests run one after another and each deletes the
// cluster-scoped objects it applied.
package examples

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
	// env is the running cluster with Surveyor's CRDs, the tools' CRDs and the controller.
	env *harness.Env
	// k8s is env's admin client.
	k8s client.Client
)

func TestMain(m *testing.M) {
	harness.Main(m, harness.Options{Controller: true, Ctx: &ctx, Env: &env, Client: &k8s, Setup: installToolCRDs})
}

// eventually polls cond until it holds or timeout passes (see harness.Env.Eventually).
func eventually(t *testing.T, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	env.Eventually(ctx, t, timeout, cond)
}
