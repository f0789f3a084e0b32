package rollout

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// A Workload's rollout record (status.rollout) has one writer, the supply chain's reconciler,
// and the rest of its status another, the Workload's own reconciler (issue 36): over a whole
// rollout no status write changes both, so each is a write of one of them alone. Both write
// with the same field manager, so managedFields cannot tell them apart; the history can, since
// the API server admits one write at a time and the watch delivers every one. Under type All,
// where Workloads used to admit themselves, and with a soak, which they used to start
// themselves, the old code changed the record together with the rest in every Workload's
// restamp.
//
// What it proves: no single write changed both parts. It does not prove which reconciler made a
// write that changed only the record; the code has one path that writes records (pin, in
// pkg/realizer/rollout.go), and the owner's status is computed carrying the record as read.
func TestRecordAndRestWrittenApart(t *testing.T) {
	const (
		name       = "rollout-writers"
		owners     = 5
		minSuccess = 2 * time.Second
	)
	ns := newNamespace(t, name)
	rolloutCase(t, name, v1alpha1.RolloutStrategy{Type: v1alpha1.RolloutAll})
	createWorkloads(t, ns, name, owners, func(int) map[string]string { return nil })
	launchController(t, name)
	rev1, _ := waitComplete(t, completion{ns: ns, chain: name, owners: owners, version: "v1"}, 2*time.Minute)

	h := watchWorkloads(t, ns)
	change(t, name, minSuccess, "v2", "ok")
	rev2 := waitTarget(t, name, rev1)
	waitComplete(t, completion{ns: ns, chain: name, target: rev2, owners: owners, version: "v2"}, 2*time.Minute)

	type last struct {
		rv     string
		status v1alpha1.WorkloadStatus
	}
	seen := map[string]last{}
	records, rest := map[string]int{}, map[string]int{}
	var problems []string
	for _, o := range h.States() {
		wl := o.Object
		prev, ok := seen[wl.Name]
		if ok && prev.rv == wl.ResourceVersion {
			continue // a relist delivers an object again: not a write
		}
		seen[wl.Name] = last{rv: wl.ResourceVersion, status: *wl.Status.DeepCopy()}
		if !ok {
			continue // the first state recorded: no write to compare with
		}
		recordChanged := !equality.Semantic.DeepEqual(prev.status.Rollout, wl.Status.Rollout)
		before, after := prev.status.DeepCopy(), wl.Status.DeepCopy()
		before.Rollout, after.Rollout = nil, nil
		restChanged := !equality.Semantic.DeepEqual(before, after)
		if recordChanged {
			records[wl.Name]++
		}
		if restChanged {
			rest[wl.Name]++
		}
		if recordChanged && restChanged {
			problems = append(problems, fmt.Sprintf("%s at resourceVersion %s: one write changed the record (%s to %s) and the rest of the status (running %q to %q, Ready %s to %s)",
				wl.Name, wl.ResourceVersion, recordString(prev.status.Rollout), recordString(wl.Status.Rollout),
				prev.status.BlueprintRevision, wl.Status.BlueprintRevision,
				conditionString(readyOf(prev.status)), conditionString(readyOf(wl.Status))))
		}
	}
	for i := range owners {
		n := workloadName(i)
		t.Logf("%s: %d writes of its record, %d of the rest of its status", n, records[n], rest[n])
	}
	reportAll(t, problems)
	h.checkHistory(t, rev2)
}

// readyOf is the Ready condition of a Workload's status, nil if none.
func readyOf(st v1alpha1.WorkloadStatus) *metav1.Condition {
	return meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionReady)
}

// A supply chain whose rolloutStrategy is removed clears its Workloads' records (they would
// otherwise pin the Workloads again, to revisions they no longer run, if a strategy came back),
// and drops its own status.rollout; the Workloads run the supply chain as it is, with no
// blueprintRevision. The records are cleared by the supply chain's reconciler, the one writer of
// records, each in a write of its own.
func TestStrategyRemovedClearsRecords(t *testing.T) {
	const (
		name   = "rollout-strategy-removed"
		owners = 3
	)
	ns := completedAll(t, name, owners)

	h := watchWorkloads(t, ns)
	update(t, &v1alpha1.ClusterSupplyChain{}, name, func(sc *v1alpha1.ClusterSupplyChain) { sc.Spec.RolloutStrategy = nil })
	eventually(t, time.Minute, func() (bool, string) {
		if r := supplyChain(t, name).Status.Rollout; r != nil {
			return false, fmt.Sprintf("supply chain rollout %+v", r)
		}
		for _, wl := range workloads(t, ns) {
			if wl.Status.Rollout != nil || wl.Status.BlueprintRevision != "" || !isReady(&wl) {
				return false, fmt.Sprintf("workload %s runs %q, record %s, Ready %s", wl.Name, wl.Status.BlueprintRevision, recordString(wl.Status.Rollout), conditionString(readyCondition(&wl)))
			}
		}
		return true, ""
	})
	var problems []string
	last := map[string]*v1alpha1.Workload{}
	for _, o := range h.States() {
		wl := o.Object
		prev := last[wl.Name]
		last[wl.Name] = wl
		if prev == nil || prev.ResourceVersion == wl.ResourceVersion {
			continue
		}
		before, after := prev.Status.DeepCopy(), wl.Status.DeepCopy()
		recordChanged := !equality.Semantic.DeepEqual(before.Rollout, after.Rollout)
		before.Rollout, after.Rollout = nil, nil
		if recordChanged && !equality.Semantic.DeepEqual(before, after) {
			problems = append(problems, fmt.Sprintf("%s at resourceVersion %s: one write cleared the record and changed the rest of the status", wl.Name, wl.ResourceVersion))
		}
	}
	reportAll(t, problems)
}

// completedAll starts a supply chain named name under rollout type All with owners Workloads of
// it, and returns their namespace once every Workload runs its first revision.
func completedAll(t *testing.T, name string, owners int) string {
	t.Helper()
	ns := newNamespace(t, name)
	rolloutCase(t, name, v1alpha1.RolloutStrategy{Type: v1alpha1.RolloutAll})
	createWorkloads(t, ns, name, owners, func(int) map[string]string { return nil })
	launchController(t, name)
	waitComplete(t, completion{ns: ns, chain: name, owners: owners, version: "v1"}, 2*time.Minute)
	return ns
}
