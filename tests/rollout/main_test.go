// Package rollout tests, end to end against a real kube-apiserver, what DESIGN §9 promises
// of a progressive rollout that the kuttl cases cannot assert: an invariant that must hold at
// every instant (never more than maxConcurrency owners in flight), the exact order of admissions
// and soaks across groups (every transition time of every owner), and a controller SIGKILLed in
// the middle of a soak or of a progress deadline that resumes exactly where the API says the
// rollout stands.
//
// Every test runs the built controller as a separate process (hack/cluster Launch), so it can be
// killed and relaunched, and observes the rollout through the API server only: each test watches
// its Workloads with an informer and checks the whole history afterwards.
//
// The tests share one cluster and one leader-election lease, so they run one after the other,
// and each stops the controller it launched (SIGTERM releases the lease).
package rollout

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
func eventually(t *testing.T, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	env.Eventually(ctx, t, timeout, cond)
}
