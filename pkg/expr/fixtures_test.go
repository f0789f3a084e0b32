package expr_test

import (
	"github.com/surveyor-dev/surveyor/internal/fixtures"
)

// The objects the tests read, shared with package health's tests.
var (
	object     = fixtures.Object
	deployment = fixtures.Deployment
	job        = fixtures.Job
)

const appYAML = fixtures.AppYAML
