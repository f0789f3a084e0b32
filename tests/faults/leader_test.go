package faults

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

const (
	// leaseDuration, renewRetry and retryJitter are controller-runtime's leader-election
	// defaults (cmd/surveyor sets none): a lease is valid for 15 s after its last renewal,
	// and a candidate retries every 2 s plus up to 120% jitter.
	leaseDuration = 15 * time.Second
	renewRetry    = 2 * time.Second
	retryJitter   = 1.2
	// maxTakeover is the longest a candidate can take to acquire the lease after the dead
	// leader's last renewal: it sees that renewal at its next retry, waits out the lease from
	// then (client-go times a lease from when the candidate observed it, so "within the lease
	// duration" is not possible), and acquires at its next retry after that. It is measured
	// between the two times the controllers wrote in the lease, so the test's own polling is
	// not in it; four seconds of slack cover timers firing late and slow requests on a loaded
	// machine, and a doubled lease (30 s) still breaks the bound.
	maxTakeover = leaseDuration + 2*time.Duration(float64(renewRetry)*(1+retryJitter)) + 4*time.Second
	// standbyWorkloads converge under each leader.
	standbyWorkloads = 100
)

// Two replicas with leader election: the standby reconciles nothing and writes nothing
// while the leader lives; when the leader is SIGKILLed mid-convergence, the standby takes
// the lease once it has expired (never earlier) and within maxTakeover, finishes the
// work without stamping anything twice and without rewriting what the old leader stamped.
func TestStandbyTakesOverFromKilledLeader(t *testing.T) {
	ns := newNamespace(t, "faults-leader")
	const chain = "faults-leader"
	configMapChain(t, chain)
	monitor := monitorWorkloads(t, ns)
	leader := launchController(t, "surveyor-leader")
	leader.waitLeader(t, 2*time.Minute)
	standby := launchController(t, "surveyor-standby")
	eventually(t, time.Minute, func() (bool, string) {
		return strings.Contains(standby.Log(), "attempting to acquire leader lease"), "the standby has not tried for the lease yet"
	})

	createWorkloads(t, ns, chain, 0, standbyWorkloads)
	waitAllReady(t, ns, standbyWorkloads, 3*time.Minute)
	// Passive: no workload reconciles, no writes of any kind (the lease is only read), and
	// none of the controllers started.
	s := standby.counters(t)
	if s.leader || s.reconciles != 0 || s.writes() != 0 {
		t.Errorf("standby while the leader lives: leader=%v, %.0f workload reconciles, %.0f writes (requests by method %v); want a passive replica: none",
			s.leader, s.reconciles, s.writes(), s.requests)
	}
	for _, line := range []string{"Starting workers", "applied stamped object"} {
		if strings.Contains(standby.Log(), line) {
			t.Errorf("the standby's log says %q while the leader lives", line)
		}
	}
	t.Logf("standby while the leader lived: requests by method %v", s.requests)
	firstBatch := resourceVersions(stampedConfigMaps(t, ns, chain))

	// A second batch is still converging when the leader dies.
	createWorkloads(t, ns, chain, standbyWorkloads, 2*standbyWorkloads)
	eventually(t, time.Minute, func() (bool, string) {
		n := len(stampedConfigMaps(t, ns, chain))
		return n > len(firstBatch), fmt.Sprintf("%d ConfigMaps stamped", n)
	})
	held := lease(t).Spec.HolderIdentity
	if err := env.Cluster.Kill(leader.Name); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	last := lease(t)
	if last.Spec.HolderIdentity == nil || held == nil || *last.Spec.HolderIdentity != *held || last.Spec.RenewTime == nil {
		t.Fatalf("the lease is not the killed leader's: %+v", last.Spec)
	}
	readyAtKill, _, err := readiness(ns)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("killed the leader with %d of %d workloads ready; its last renewal was %s before", readyAtKill, 2*standbyWorkloads,
		killed.Sub(last.Spec.RenewTime.Time).Round(time.Millisecond))

	standby.waitLeader(t, maxTakeover+10*time.Second)
	takeover := time.Since(killed)
	now := lease(t)
	if now.Spec.HolderIdentity == nil || *now.Spec.HolderIdentity == *held {
		t.Fatalf("the standby reports leadership but the lease holder is %v", now.Spec.HolderIdentity)
	}
	if now.Spec.AcquireTime == nil {
		t.Fatalf("the new lease has no acquireTime: %+v", now.Spec)
	}
	gap := now.Spec.AcquireTime.Sub(last.Spec.RenewTime.Time)
	t.Logf("the standby led %s after the kill; it acquired the lease %s after the old leader's last renewal (bound %s, lease %s)",
		takeover.Round(time.Millisecond), gap.Round(time.Millisecond), maxTakeover, leaseDuration)
	if gap > maxTakeover {
		t.Errorf("the standby acquired the lease %s after the old leader's last renewal, want at most %s (lease %s + two retry periods with jitter + slack)", gap.Round(time.Millisecond), maxTakeover, leaseDuration)
	}
	if gap < leaseDuration {
		t.Errorf("the standby acquired the lease %s after the old leader's last renewal, before the %s lease expired: two leaders overlapped", gap, leaseDuration)
	}

	took := waitAllReady(t, ns, 2*standbyWorkloads, 3*time.Minute)
	t.Logf("all %d workloads ready %s after the standby led", 2*standbyWorkloads, took.Round(time.Millisecond))
	after := resourceVersions(assertStampedOnce(t, ns, chain, 2*standbyWorkloads))
	for name, rv := range firstBatch {
		if after[name] != rv {
			t.Errorf("ConfigMap %s, stamped by the old leader, was written again by the new one (resourceVersion %s -> %s)", name, rv, after[name])
		}
	}
	monitor.check(t)
}
