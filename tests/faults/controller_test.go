package faults

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"

	"github.com/surveyor-dev/surveyor/hack/cluster"
	"github.com/surveyor-dev/surveyor/internal/harness"
)

// controller is one Surveyor process the cluster launched.
type controller struct {
	name        string
	metricsPort int
}

// launchController starts the built controller as process name with leader election on
// (unless extra turns it off), debug logging and its metrics served on a loopback port.
// After the test it is terminated, which releases its lease for the next test, and its
// log tail is printed if the test failed.
func launchController(t testing.TB, name string, extra ...string) *controller {
	t.Helper()
	port, err := cluster.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{"--metrics-bind-address=127.0.0.1:" + strconv.Itoa(port), "--zap-log-level=debug"}, extra...)
	if _, err := env.LaunchController(ctx, name, args...); err != nil {
		t.Fatalf("launching %s: %v", name, err)
	}
	c := &controller{name: name, metricsPort: port}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("last lines of %s's log:\n%s", name, c.logTail(60))
		}
		_ = env.Cluster.Terminate(name)
	})
	return c
}

// relaunch starts the controller again with the same flags (and metrics port).
func (c *controller) relaunch(t *testing.T) {
	t.Helper()
	if err := env.Cluster.Relaunch(ctx, c.name); err != nil {
		t.Fatal(err)
	}
}

// log is everything the controller (every launch of it) has written.
func (c *controller) log() string {
	b, _ := os.ReadFile(env.Cluster.LogPath(c.name))
	return string(b)
}

func (c *controller) logTail(n int) string {
	lines := strings.Split(strings.TrimRight(c.log(), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// metrics scrapes the controller's Prometheus endpoint (HTTPS) as the cluster admin.
func (c *controller) metrics() (harness.Metrics, error) {
	return harness.ScrapeMetrics(env.AdminMetricsClient(), fmt.Sprintf("https://127.0.0.1:%d/metrics", c.metricsPort))
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
	families, err := c.metrics()
	if err != nil {
		t.Fatalf("scraping %s: %v", c.name, err)
	}
	return countersOf(families)
}

func countersOf(families harness.Metrics) counters {
	out := counters{
		reconciles:     families.ReconcileTotal("workload"),
		requests:       map[string]float64{},
		failedRequests: families.Sum("rest_client_requests_total", map[string]string{"code": "<error>"}),
	}
	for _, m := range families["rest_client_requests_total"].GetMetric() {
		out.requests[harness.Label(m, "method")] += m.GetCounter().GetValue()
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

// pid is the controller's current process id.
func (c *controller) pid() int { return env.Cluster.Pid(c.name) }

// cpuSeconds is the CPU time (user + system) the controller's current process used so far.
func (c *controller) cpuSeconds(t *testing.T) float64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", c.pid()))
	if err != nil {
		t.Fatal(err)
	}
	// Fields after the parenthesised command name; utime and stime are the 14th and
	// 15th fields of the whole line, in clock ticks (100 per second on Linux).
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	utime, _ := strconv.ParseFloat(fields[11], 64)
	stime, _ := strconv.ParseFloat(fields[12], 64)
	return (utime + stime) / 100
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
		families, err := c.metrics()
		if err != nil {
			return false, err.Error()
		}
		return countersOf(families).leader, c.name + " does not hold the lease yet"
	})
}
