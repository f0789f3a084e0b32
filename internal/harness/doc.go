// Package harness starts what Surveyor's Go end-to-end suites and its benchmark
// (hack/bench) run against: the local cluster of hack/cluster with the CRDs and the
// controller's RBAC installed (Start), an admin client, and the controller itself,
// in-process (Env.StartController) or as a separate process (Env.LaunchController).
//
// A suite's TestMain is Main. Tests wait for what they expect with Env.Eventually and
// prove that something does not happen with Env.Consistently; they record every state
// of the objects they watch with Record (watch.go) and check the History afterwards;
// they read what the controller and the API server did from their Prometheus metrics
// (metrics.go), from /proc (proc.go) and from the in-process controller's per-object
// reconcile counts (reconciles.go).
package harness
