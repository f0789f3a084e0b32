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
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/surveyor-dev/surveyor/tests/harness"
)

var (
	// ctx lives as long as the test binary.
	ctx context.Context
	// env is the running cluster with CRDs and RBAC; no controller runs until a test launches one.
	env *harness.Env
	// k8s is an admin client with a QPS high enough to create hundreds of Workloads quickly.
	k8s client.Client
	// controllerBin is cmd/surveyor built for this run.
	controllerBin string
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var cancel context.CancelFunc
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	// The controllers under test are separate processes with their own logs; the test's
	// own informers (the status monitor) log nothing.
	logf.SetLogger(logr.Discard())
	dir, err := os.MkdirTemp("", "surveyor-faults-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if controllerBin, err = harness.BuildController(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if env, err = harness.Start(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer env.Stop()
	cfg := rest.CopyConfig(env.Cluster.Config)
	cfg.QPS, cfg.Burst = 200, 400
	// A short timeout keeps a request made while kube-apiserver is down from hanging.
	cfg.Timeout = 20 * time.Second
	if k8s, err = client.New(cfg, client.Options{Scheme: env.Scheme}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// eventually polls cond until it holds or timeout passes (see harness.Env.Eventually).
func eventually(t *testing.T, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	env.Eventually(ctx, t, timeout, cond)
}
