package faults

import (
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"

	"github.com/surveyor-dev/surveyor/internal/harness"
)

// controller is one Surveyor process the cluster launched.
type controller struct{ *harness.Controller }

// launchController starts the built controller as process name with leader election on
// (unless extra turns it off), debug logging and its metrics served on a loopback port.
// After the test it is terminated, which releases its lease for the next test, and its
// log tail is printed if the test failed.
func launchController(t testing.TB, name string, extra ...string) *controller {
	t.Helper()
	return &controller{env.LaunchForTest(ctx, t, harness.Process{Name: name, Metrics: true, Args: append([]string{"--zap-log-level=debug"}, extra...)})}
}

// relaunch starts the controller again with the same flags (and metrics port).
func (c *controller) relaunch(t *testing.T) {
	t.Helper()
	if err := env.Cluster.Relaunch(ctx, c.Name); err != nil {
		t.Fatal(err)
	}
}

// counters is a snapshot of what a controller did, from its own metrics.
type counters struct {
	// reconciles of the workload controller, whatever their result.
	reconciles float64
	// requests to the API server by HTTP method, and those that got no response at all
	// (code "<error>": connection refused while the server is down).
	requests       map[string]float64
	failedRequests float64
	// leader is leader_election_master_status: 1 while the process holds the lease.
	leader bool
}

// writes is the number of mutating requests (POST, PUT, PATCH, DELETE).
func (c counters) writes() float64 {
	return c.requests["POST"] + c.requests["PUT"] + c.requests["PATCH"] + c.requests["DELETE"]
}

func (c *controller) counters(t *testing.T) counters {
	t.Helper()
	families, err := c.Metrics(ctx)
	if err != nil {
		t.Fatalf("scraping %s: %v", c.Name, err)
	}
	return countersOf(families)
}

func countersOf(families harness.Metrics) counters {
	out := counters{
		reconciles:     families.ReconcileTotal("workload"),
		requests:       families.By("rest_client_requests_total", nil, "method"),
		failedRequests: families.Sum("rest_client_requests_total", map[string]string{"code": "<error>"}),
	}
	// The metrics endpoint's own TokenReviews and SubjectAccessReviews, asked because
	// this scrape or an earlier one came, are POSTs too, but no write of the controller's.
	out.requests["POST"] -= families.Sum("surveyor_metrics_reviews_total", nil)
	for _, m := range families["leader_election_master_status"].GetMetric() {
		if m.GetGauge().GetValue() == 1 {
			out.leader = true
		}
	}
	return out
}

// cpuSeconds is the CPU time (user + system) the controller's current process used so far.
func (c *controller) cpuSeconds(t *testing.T) float64 {
	t.Helper()
	st, err := c.Proc()
	if err != nil {
		t.Fatal(err)
	}
	return st.CPU.Seconds()
}

// lease reads the leader-election lease.
func lease(t *testing.T) *coordinationv1.Lease {
	t.Helper()
	return harness.Lease(ctx, t, k8s)
}

// waitLeader waits until c holds the lease and its controllers run.
func (c *controller) waitLeader(t testing.TB, timeout time.Duration) {
	t.Helper()
	eventually(t, timeout, func() (bool, string) {
		families, err := c.Metrics(ctx)
		if err != nil {
			return false, err.Error()
		}
		return countersOf(families).leader, c.Name + " does not hold the lease yet"
	})
}
