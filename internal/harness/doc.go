// Package harness starts what Surveyor's Go end-to-end suites run against: the local
// cluster of hack/cluster with the CRDs and the controller's RBAC installed, an admin
// client, and the controller itself, in-process or as a separate process.
//
// A suite's TestMain is Main. Tests wait for what they expect with Env.Eventually and
// prove that something does not happen with Env.Consistently; they read what the
// controller and the API server did from their Prometheus metrics (metrics.go) and
// from the in-process controller's per-object reconcile counts (reconciles.go).
package harness
