package faults

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

const (
	// restartObjects is how many ConfigMaps carrying Surveyor's label the restarted
	// controller's ConfigMap informer lists before it syncs.
	restartObjects = 30000
	// restartWorkloads is how many Ready Workloads the restart must leave as they are.
	restartWorkloads = 50
)

// A controller restarted while its ConfigMap cache fills with 30,000 labelled objects
// (a large cluster: its first list takes seconds) writes nothing and flaps nothing: no
// Workload's status or stamped object is written, no Ready condition moves, and no
// rollout record moves (DESIGN §12, "Kinds"). Reconciles that find the kind still listing
// wait for its sync instead of reporting it not served.
func TestRestartWhileCacheFillsWritesNothing(t *testing.T) {
	ns := newNamespace(t, "faults-restart")
	const chain = "faults-restart"
	configMapChain(t, chain)
	rolloutChain(t, chain)
	c := launchController(t, "surveyor-restart")
	c.waitLeader(t, 2*time.Minute)
	createWorkloads(t, ns, chain, 0, restartWorkloads)
	waitAllReady(t, ns, restartWorkloads, 2*time.Minute)
	settled := waitSettled(t, ns, restartWorkloads)

	foreign := newNamespace(t, "faults-restart-foreign")
	t.Cleanup(func() {
		_ = k8s.DeleteAllOf(ctx, &corev1.ConfigMap{}, client.InNamespace(foreign))
	})
	start := time.Now()
	createLabelledConfigMaps(t, foreign, restartObjects)
	t.Logf("created %d labelled ConfigMaps in %s", restartObjects, time.Since(start).Round(time.Millisecond))

	if err := env.Cluster.Terminate(c.Name); err != nil {
		t.Fatal(err)
	}
	before := workloadStatuses(t, ns)
	objects := resourceVersions(stampedConfigMaps(t, ns, chain))
	monitor := monitorWorkloads(t, ns)
	restarted := time.Now()
	c.relaunch(t)
	c.waitLeader(t, 2*time.Minute)
	// Every Workload was reconciled at least once by the new process.
	eventually(t, 3*time.Minute, func() (bool, string) {
		got := c.counters(t).reconciles
		return got >= restartWorkloads, fmt.Sprintf("%.0f of %d workloads reconciled since the restart", got, restartWorkloads)
	})
	t.Logf("every workload reconciled %s after the restart (settled state from %s)", time.Since(restarted).Round(time.Millisecond), settled)
	// And for a few seconds more, which span the retries of anything that failed.
	env.Consistently(ctx, t, 3*time.Second, 250*time.Millisecond, func() (bool, string) {
		after := workloadStatuses(t, ns)
		for name, was := range before {
			if now := after[name]; now != was {
				return false, fmt.Sprintf("workload %s was written after the restart:\nbefore: %s\nafter:  %s", name, was, now)
			}
		}
		return true, ""
	})
	monitor.check(t)
	for name, rv := range resourceVersions(stampedConfigMaps(t, ns, chain)) {
		if objects[name] != rv {
			t.Errorf("stamped ConfigMap %s was written after the restart (resourceVersion %s, then %s)", name, objects[name], rv)
		}
	}
}

// rolloutChain gives configMapChain's supply chain a Progressive rollout, so that every
// Workload carries a rollout record.
func rolloutChain(t *testing.T, chain string) {
	t.Helper()
	eventually(t, time.Minute, func() (bool, string) {
		var sc v1alpha1.ClusterSupplyChain
		if err := k8s.Get(ctx, client.ObjectKey{Name: chain}, &sc); err != nil {
			return false, err.Error()
		}
		sc.Spec.RolloutStrategy = &v1alpha1.RolloutStrategy{Type: v1alpha1.RolloutProgressive}
		if err := k8s.Update(ctx, &sc); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
}

// waitSettled waits until the n Workloads of ns are Ready with Succeeded rollout records
// and their statuses stay as they are for two seconds, and returns how long that took.
func waitSettled(t *testing.T, ns string, n int) time.Duration {
	t.Helper()
	start := time.Now()
	var last map[string]string
	stableSince := time.Now()
	eventually(t, 2*time.Minute, func() (bool, string) {
		var list v1alpha1.WorkloadList
		if err := k8s.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		for i := range list.Items {
			wl := &list.Items[i]
			if !isReady(wl) || wl.Status.Rollout == nil || wl.Status.Rollout.State != v1alpha1.RolloutSucceeded {
				stableSince = time.Now()
				return false, fmt.Sprintf("workload %s: ready %t, rollout record %+v", wl.Name, isReady(wl), wl.Status.Rollout)
			}
		}
		now := workloadStatuses(t, ns)
		if len(now) != n || fmt.Sprint(now) != fmt.Sprint(last) {
			last, stableSince = now, time.Now()
		}
		return time.Since(stableSince) >= 2*time.Second, fmt.Sprintf("%d workloads, statuses still changing", len(now))
	})
	return time.Since(start)
}

// workloadStatuses is each Workload of ns's resourceVersion and status, as JSON.
func workloadStatuses(t *testing.T, ns string) map[string]string {
	t.Helper()
	var list v1alpha1.WorkloadList
	if err := k8s.List(ctx, &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, wl := range list.Items {
		status, err := json.Marshal(wl.Status)
		if err != nil {
			t.Fatal(err)
		}
		out[wl.Name] = wl.ResourceVersion + " " + string(status)
	}
	return out
}

// createLabelledConfigMaps creates n ConfigMaps of about a kilobyte in ns, each with
// Surveyor's resource-name label (so the controller's ConfigMap informer lists them), with
// 32 concurrent writers.
func createLabelledConfigMaps(t *testing.T, ns string, n int) {
	t.Helper()
	filler := strings.Repeat("x", 1024)
	createConcurrently(t, 32, 0, n, func(i int) client.Object {
		return &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("foreign-%05d", i),
				Labels: map[string]string{v1alpha1.LabelResourceName: "foreign"}},
			Data: map[string]string{"filler": filler},
		}
	})
}
