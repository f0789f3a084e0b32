package harness

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/surveyor-dev/surveyor/internal/yttworker"
)

// Options says what a suite needs besides the cluster with Surveyor's CRDs and RBAC, and
// where its tests find what Main started.
type Options struct {
	// Controller runs the realizer in-process as the controller's own ServiceAccount
	// (Env.StartController) for as long as the tests run. Without it the controllers
	// under test are processes with logs of their own (Env.LaunchController), and what
	// runs in the test binary (its informers) logs nothing.
	Controller bool
	// BuildController compiles cmd/surveyor before the cluster starts, for suites that
	// launch the controller as a process (Env.LaunchController) to kill or restart it.
	BuildController bool

	// Ctx and Env, when set, receive before the first test the context that lives as
	// long as the test binary and the environment: a suite's package variables.
	Ctx *context.Context
	Env **Env
	// Client, when set, receives an admin client: Env.Client, or with FastClient
	// Env.FastClient().
	Client     *client.Client
	FastClient bool

	// Setup runs once everything is up, before the first test, for whatever else the
	// suite shares.
	Setup func(ctx context.Context, env *Env) error
}

// Main is a suite's TestMain: it starts what opts asks for, runs the tests, stops
// everything and exits with the tests' result, or with 1 when the environment did not
// come up.
//
// It first makes the test binary a ytt worker when it was started as one: a suite that
// runs the controller in process runs its ytt workers from its own binary
// (internal/yttworker), so every TestMain must go through here or call
// yttworker.RunIfWorker itself.
func Main(m *testing.M, opts Options) {
	yttworker.RunIfWorker()
	os.Exit(run(m, opts))
}

func run(m *testing.M, opts Options) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if !opts.Controller {
		logf.SetLogger(logr.Discard())
	}
	var bin string
	if opts.BuildController {
		dir, err := os.MkdirTemp("", "surveyor-controller-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		if bin, err = buildController(dir); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	env, err := Start(ctx, StartOptions{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer env.Stop()
	env.controllerBin = bin
	if opts.Controller {
		if err := env.StartController(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "starting the controller:", err)
			return 1
		}
	}
	if opts.Ctx != nil {
		*opts.Ctx = ctx
	}
	if opts.Env != nil {
		*opts.Env = env
	}
	if opts.Client != nil {
		*opts.Client = env.Client
		if opts.FastClient {
			if *opts.Client, err = env.FastClient(); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
		}
	}
	if opts.Setup != nil {
		if err := opts.Setup(ctx, env); err != nil {
			fmt.Fprintln(os.Stderr, "setting up the suite:", err)
			return 1
		}
	}
	return m.Run()
}
