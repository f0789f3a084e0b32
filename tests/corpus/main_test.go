package corpus

import (
	"context"
	"testing"

	"github.com/surveyor-dev/surveyor/internal/harness"
)

var (
	// ctx lives as long as the test binary.
	ctx context.Context
	// env is the running cluster with CRDs, RBAC and the controller.
	env *harness.Env
)

func TestMain(m *testing.M) {
	harness.Main(m, harness.Options{Controller: true, Ctx: &ctx, Env: &env})
}
