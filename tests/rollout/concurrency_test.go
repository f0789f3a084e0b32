package rollout

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// A Progressive rollout to 20 Workloads with maxConcurrency 3 never has more than 3 of them
// Progressing at the new revision at any instant of the API server's history, has exactly 3 at
// some instant (the limit is used, not just respected), never lets a Workload run the new
// revision before it is admitted, and ends with every Workload Succeeded there, its ConfigMap
// stamped from the new template.
func TestProgressiveNeverExceedsMaxConcurrency(t *testing.T) {
	const (
		name           = "rollout-concurrency"
		owners         = 20
		maxConcurrency = 3
		minSuccess     = 3 * time.Second
	)
	ns := newNamespace(t, name)
	limit := intstr.FromInt32(maxConcurrency)
	rolloutCase(t, name, v1alpha1.RolloutStrategy{Type: v1alpha1.RolloutProgressive, MaxConcurrency: &limit})
	createWorkloads(t, ns, name, owners, func(int) map[string]string { return nil })
	launchController(t, name)
	rev1, _ := waitComplete(t, completion{ns: ns, chain: name, owners: owners, version: "v1"}, 2*time.Minute)

	h := watchWorkloads(t, ns)
	start := time.Now()
	change(t, name, minSuccess, "v2", "ok")
	rev2 := waitTarget(t, name, rev1)
	waitComplete(t, completion{ns: ns, chain: name, target: rev2, owners: owners, version: "v2"}, 3*time.Minute)
	t.Logf("rolled %s out to %d workloads, %d at a time, in %s", rev2, owners, maxConcurrency, time.Since(start).Round(time.Millisecond))

	most, observed := h.maxInFlight(rev2)
	t.Logf("at most %d workloads in flight over %d observed states", most, observed)
	if most != maxConcurrency {
		t.Errorf("at most %d workloads were Progressing at %s at once, want exactly maxConcurrency %d", most, rev2, maxConcurrency)
	}
	h.checkHistory(t, rev2)
}
