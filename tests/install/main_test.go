package install

import (
	"context"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/internal/harness"
)

var (
	// ctx lives as long as the test binary.
	ctx context.Context
	// env is the running cluster, without the controller.
	env *harness.Env
	// k8s is env's admin client.
	k8s client.Client
)

func TestMain(m *testing.M) {
	harness.Main(m, harness.Options{BuildController: true, Ctx: &ctx, Env: &env, Client: &k8s})
}
