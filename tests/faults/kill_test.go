package faults

import (
	"fmt"
	"testing"
	"time"
)

// killWorkloads is how many Workloads converge while the controller is killed.
const killWorkloads = 300

// A controller SIGKILLed halfway through converging 300 Workloads, then started again
// (as a Deployment would restart it), converges every Workload with exactly one object
// per resource; the objects stamped before the kill are not written again, and no
// Workload's status goes backwards.
func TestControllerKilledMidConvergence(t *testing.T) {
	ns := newNamespace(t, "faults-kill")
	const chain = "faults-kill"
	configMapChain(t, chain)
	monitor := monitorWorkloads(t, ns)
	c := launchController(t, "surveyor-kill")
	c.waitLeader(t, 2*time.Minute)

	start := time.Now()
	createWorkloads(t, ns, chain, 0, killWorkloads)
	t.Logf("created %d workloads in %s", killWorkloads, time.Since(start).Round(time.Millisecond))

	// Kill once half of the Workloads are Ready: the rest are queued, half-stamped or
	// have their objects but not yet their status.
	var readyAtKill int
	eventually(t, 3*time.Minute, func() (bool, string) {
		ready, _, err := readiness(ns)
		if err != nil {
			return false, err.Error()
		}
		readyAtKill = ready
		return ready >= killWorkloads/2, fmt.Sprintf("%d of %d workloads ready", ready, killWorkloads)
	})
	if err := env.Cluster.Kill(c.Name); err != nil {
		t.Fatal(err)
	}
	killedAt := time.Now()
	// What the dead controller left behind; the new one must not write any of it again.
	before := resourceVersions(stampedConfigMaps(t, ns, chain))
	readyAfterKill, _, err := readiness(ns)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("killed %s %s after the first create: %d workloads ready, %d ConfigMaps stamped",
		c.Name, killedAt.Sub(start).Round(time.Millisecond), readyAfterKill, len(before))
	if readyAfterKill == killWorkloads {
		t.Fatalf("every workload was ready before the kill took effect (%d at the poll); nothing was left to converge", readyAtKill)
	}

	// The dead process still holds the lease; the new one takes it when it expires.
	c.relaunch(t)
	c.waitLeader(t, time.Minute)
	t.Logf("the restarted controller leads %s after the kill", time.Since(killedAt).Round(time.Millisecond))
	took := waitAllReady(t, ns, killWorkloads, 4*time.Minute)
	t.Logf("all %d workloads ready %s after the restarted controller led (%s after the kill)",
		killWorkloads, took.Round(time.Millisecond), time.Since(killedAt).Round(time.Millisecond))

	after := resourceVersions(assertStampedOnce(t, ns, chain, killWorkloads))
	rewritten := 0
	for name, rv := range before {
		if after[name] != rv {
			rewritten++
			if rewritten <= 5 {
				t.Errorf("ConfigMap %s, stamped before the kill, was written again by the restarted controller (resourceVersion %s -> %s)", name, rv, after[name])
			}
		}
	}
	if rewritten > 0 {
		t.Errorf("%d of the %d ConfigMaps stamped before the kill were written again", rewritten, len(before))
	}
	monitor.check(t)
}
