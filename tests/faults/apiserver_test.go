package faults

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/internal/harness"
)

const (
	// apiServerWorkloads converge while kube-apiserver goes away.
	apiServerWorkloads = 300
	// apiServerDowntime is how long kube-apiserver stays stopped.
	apiServerDowntime = 10 * time.Second
	// workloadBaseDelay is the first retry delay of a failed Workload reconcile
	// (pkg/realizer/reconciler.go: an exponential per-item backoff from 50ms to 1 minute).
	workloadBaseDelay = 50 * time.Millisecond
	// maxOutageCPU is the share of one core the controller may burn while it cannot reach
	// the API server. A hot loop burns a whole core (or the 8 workers' worth of two);
	// backing off costs a few percent.
	maxOutageCPU = 0.25
)

// kube-apiserver stopped for 10 s while 300 Workloads converge, then restarted with the
// same flags on the same etcd. The controller process stays up, backs off instead of
// spinning (bounded reconciles and CPU while the server is unreachable), and converges
// every Workload afterwards with exactly one object per resource and no status going
// backwards.
//
// Leader election is off here: with it on, client-go gives up the lease after its 10 s
// renew deadline, which an outage of 10 s plus the server's start-up exceeds, and
// controller-runtime then ends the process by design (see
// TestAPIServerRestartLeaderElected). This test is about the process's own backoff.
func TestAPIServerRestart(t *testing.T) {
	ns := newNamespace(t, "faults-apiserver")
	const chain = "faults-apiserver"
	configMapChain(t, chain)
	monitor := monitorWorkloads(t, ns)
	c := launchController(t, "surveyor-apiserver", "--leader-elect=false")
	eventually(t, time.Minute, func() (bool, string) {
		_, err := c.Metrics(ctx)
		return err == nil, fmt.Sprint(err)
	})

	createWorkloads(t, ns, chain, 0, apiServerWorkloads)
	var pending int
	eventually(t, 3*time.Minute, func() (bool, string) {
		ready, _, err := readiness(ns)
		if err != nil {
			return false, err.Error()
		}
		pending = apiServerWorkloads - ready
		return ready >= apiServerWorkloads/3, fmt.Sprintf("%d of %d workloads ready", ready, apiServerWorkloads)
	})

	before, cpuBefore := c.counters(t), c.cpuSeconds(t)
	t.Logf("stopping kube-apiserver with %d of %d workloads not ready", pending, apiServerWorkloads)
	outage := apiServerOutage(t, c)
	after, cpuAfter := c.counters(t), c.cpuSeconds(t)

	// Each Workload that was still converging fails and is retried after 50ms, 100ms,
	// 200ms, ...: within an outage of W it is tried at most 1+log2(W/50ms+1) times, and
	// once more when its in-flight reconcile ends. Workloads that had converged are not
	// reconciled at all (no event reaches the controller while the server is down).
	perItem := 2 + math.Log2(float64(outage)/float64(workloadBaseDelay)+1)
	maxReconciles := float64(pending) * perItem
	reconciles := after.reconciles - before.reconciles
	failed := after.failedRequests - before.failedRequests
	cpu := cpuAfter - cpuBefore
	t.Logf("outage of %s (stopped for 10s, then start-up): %.0f workload reconciles (bound %.0f = %d pending x %.1f), %.0f requests that got no answer, %.2f CPU-seconds (%.1f%% of a core)",
		outage.Round(time.Millisecond), reconciles, maxReconciles, pending, perItem, failed, cpu, 100*cpu/outage.Seconds())
	// Each failed reconcile tries at most two requests (the apply and the status patch);
	// the informers' relists back off on their own (client-go: 800ms doubling to 30s), and
	// fewer than 20 kinds are watched.
	if maxFailed := 2*maxReconciles + 20*perItem; failed > maxFailed {
		t.Errorf("%.0f requests failed while the API server was unreachable for %s, want at most %.0f", failed, outage.Round(time.Millisecond), maxFailed)
	}
	if reconciles > maxReconciles {
		t.Errorf("%.0f workload reconciles while the API server was unreachable for %s, want at most %.0f: failed reconciles are not backing off",
			reconciles, outage.Round(time.Millisecond), maxReconciles)
	}
	if limit := maxOutageCPU * outage.Seconds(); cpu > limit {
		t.Errorf("the controller used %.2f CPU-seconds during a %s outage, want at most %.2f (%.0f%% of a core): it is spinning",
			cpu, outage.Round(time.Millisecond), limit, 100*maxOutageCPU)
	}

	took := waitAllReady(t, ns, apiServerWorkloads, 4*time.Minute)
	t.Logf("all %d workloads ready %s after kube-apiserver was ready again", apiServerWorkloads, took.Round(time.Millisecond))
	assertStampedOnce(t, ns, chain, apiServerWorkloads)
	monitor.check(t)
}

// apiServerOutage stops kube-apiserver (SIGTERM; it stops listening at once), starts it
// again with the same flags on the same etcd apiServerDowntime after the signal, and
// waits until it is ready. It fails the test if controller c exits meanwhile, and
// returns how long the API server was unreachable.
func apiServerOutage(t *testing.T, c *controller) time.Duration {
	t.Helper()
	signalled := time.Now()
	if err := env.Cluster.Terminate("kube-apiserver"); err != nil {
		t.Fatal(err)
	}
	t.Logf("kube-apiserver exited %s after SIGTERM", time.Since(signalled).Round(time.Millisecond))
	// The outage is the point: it lasts apiServerDowntime, and the controller must stay up
	// through all of it.
	env.Consistently(ctx, t, time.Until(signalled.Add(apiServerDowntime)), 200*time.Millisecond, func() (bool, string) {
		exited, state := env.Cluster.Exited(c.Name)
		return !exited, fmt.Sprintf("%s exited during the outage: %s", c.Name, state)
	})
	if err := env.Cluster.Relaunch(ctx, "kube-apiserver"); err != nil {
		t.Fatal(err)
	}
	if err := env.Cluster.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	outage := time.Since(signalled)
	if exited, state := env.Cluster.Exited(c.Name); exited {
		t.Fatalf("%s exited during the outage: %s", c.Name, state)
	}
	return outage
}

// leaderWorkloads converge in the leader-elected variant.
const leaderWorkloads = 100

// The same outage with leader election on, as the controller is deployed. client-go must
// renew the lease within its 10 s renew deadline; it cannot while the API server is
// down, so the controller gives up the lease and controller-runtime ends the process
// ("leader election lost"), by design: a process that may have lost its lease must not
// reconcile on. The Deployment's restart is what brings it back. The test asserts that the
// controller either rode out the outage (it renews its lease once the server is back) or
// exited for exactly that reason, and that once it runs again (relaunched here as the
// kubelet would) everything converges with no object stamped twice. Which of the two
// happened is logged.
func TestAPIServerRestartLeaderElected(t *testing.T) {
	ns := newNamespace(t, "faults-apiserver-le")
	const chain = "faults-apiserver-le"
	configMapChain(t, chain)
	monitor := monitorWorkloads(t, ns)
	c := launchController(t, "surveyor-apiserver-le")
	c.waitLeader(t, 2*time.Minute)
	createWorkloads(t, ns, chain, 0, leaderWorkloads)
	eventually(t, 3*time.Minute, func() (bool, string) {
		ready, _, err := readiness(ns)
		if err != nil {
			return false, err.Error()
		}
		return ready >= leaderWorkloads/3, fmt.Sprintf("%d of %d workloads ready", ready, leaderWorkloads)
	})

	holder := lease(t).Spec.HolderIdentity
	signalled := time.Now()
	if err := env.Cluster.Restart(ctx, "kube-apiserver", apiServerDowntime); err != nil {
		t.Fatal(err)
	}
	back := time.Now()
	t.Logf("kube-apiserver was unreachable for %s", back.Sub(signalled).Round(time.Millisecond))
	// Either the outage outlasted the renew deadline, and the controller gives up the
	// lease and exits, or it did not, and the controller renews the lease at its next
	// retry (every 2s) now that the server answers. Wait until one of the two shows.
	var exited bool
	var state *os.ProcessState
	eventually(t, time.Minute, func() (bool, string) {
		if exited, state = env.Cluster.Exited(c.Name); exited {
			return true, ""
		}
		l := &coordinationv1.Lease{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: harness.ControllerNamespace, Name: harness.LeaseName}, l); err != nil {
			return false, err.Error()
		}
		renewed := l.Spec.RenewTime != nil && l.Spec.RenewTime.After(back)
		same := holder != nil && l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity == *holder
		return renewed && same, fmt.Sprintf("%s runs; the lease is held by %s, last renewed at %v; the server was back at %v",
			c.Name, ptr.Deref(l.Spec.HolderIdentity, "nobody"), l.Spec.RenewTime, back)
	})
	if exited {
		if !strings.Contains(c.Log(), "leader election lost") {
			t.Fatalf("%s exited during the outage (%s) without losing its lease; log tail:\n%s", c.Name, state, c.LogTail(30))
		}
		t.Logf("FINDING: %s exited during the outage (%s): leader election lost after the 10s renew deadline; relaunching it as its Deployment would", c.Name, state)
		c.relaunch(t)
	} else {
		t.Logf("%s rode out the outage without losing its lease", c.Name)
	}
	c.waitLeader(t, time.Minute)
	took := waitAllReady(t, ns, leaderWorkloads, 4*time.Minute)
	t.Logf("all %d workloads ready %s after the controller led again", leaderWorkloads, took.Round(time.Millisecond))
	assertStampedOnce(t, ns, chain, leaderWorkloads)
	monitor.check(t)
}
