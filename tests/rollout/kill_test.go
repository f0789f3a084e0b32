package rollout

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// resumeSlack is how long after a soak's end, or after the relaunched controller leads, a
// Succeeded transition may come: the controller re-checks at status.rollout.nextCheckTime, at
// the API's one-second precision, a restarted one first syncs its caches, and the supply chain
// records readyTime and Succeeded one decision apart (6 s seen beside another make test). It
// stays well under TestKillDuringSoak's 30 s soak, so a soak restarted at the relaunch still fails.
const resumeSlack = 12 * time.Second

// A controller SIGKILLed while group g1 soaks, and relaunched, resumes the soak where the API
// says it stands: every g1 Workload reaches Succeeded a full minSuccessTime after its soak began
// (not earlier, and not a fresh minSuccessTime after the restart), g2 is admitted only after the
// last g1 Workload Succeeded, nobody is admitted twice, and the rollout completes.
func TestKillDuringSoak(t *testing.T) {
	const (
		name       = "rollout-kill-soak"
		owners     = 6
		minSuccess = 30 * time.Second
	)
	ns := newNamespace(t, name)
	rolloutCase(t, name, v1alpha1.RolloutStrategy{Type: v1alpha1.RolloutProgressivePerGroup, Groups: groupsByLabel("g1", "g2")})
	createWorkloads(t, ns, name, owners, inGroups(owners, "g1", "g2"))
	c := launchController(t, name, shortLease...)
	rev1, _ := waitComplete(t, completion{ns: ns, chain: name, owners: owners, version: "v1"}, 2*time.Minute)

	h := watchWorkloads(t, ns)
	change(t, name, minSuccess, "v2", "ok")
	rev2 := waitTarget(t, name, rev1)
	// g1 soaks: admitted, running the new revision and Ready there, and the supply chain has
	// recorded the soak's start (readyTime; it writes every record, a decision after the
	// Workload's own status shows it Ready). One that already Succeeded counts too, as a loaded
	// machine may record the last readyTime after the first soak ended: the checks below need
	// only that the kill fell within the last soak, which they assert.
	readyBefore := map[string]time.Time{}
	eventually(t, time.Minute, func() (bool, string) {
		soaking := 0
		for _, wl := range workloads(t, ns) {
			r := wl.Status.Rollout
			if r != nil && r.Group == "g1" && r.Revision == rev2 && (r.State == v1alpha1.RolloutProgressing || r.State == v1alpha1.RolloutSucceeded) && r.ReadyTime != nil &&
				wl.Status.BlueprintRevision == rev2 && isReady(&wl) {
				soaking++
				readyBefore[wl.Name] = r.ReadyTime.Time
			}
		}
		return soaking == owners/2, fmt.Sprintf("%d of %d g1 workloads soaking or soaked at %s", soaking, owners/2, rev2)
	})
	_, leads := c.killAndRelaunch(t, time.Time{})
	_, wls := waitComplete(t, completion{ns: ns, chain: name, target: rev2, owners: owners, version: "v2"}, 2*time.Minute)

	g1, g2 := inGroup(wls, "g1"), inGroup(wls, "g2")
	lastG1 := assertSoaked(t, g1, minSuccess)
	for _, wl := range g1 {
		// Resumed, not restarted: Succeeded at the soak's end, or as soon as the relaunched
		// controller looked if the soak ended while none ran. The soak began no later than the
		// readyTime recorded before the kill, which a restarted soak would have replaced.
		start := soakStart(wl)
		if r := readyBefore[wl.Name]; r.After(start) {
			start = r
		}
		end := start.Add(minSuccess)
		if leads.After(end) {
			end = leads
		}
		if at := wl.Status.Rollout.LastTransitionTime.Time; at.After(end.Add(resumeSlack)) {
			t.Errorf("%s: Succeeded at %s, more than %s after its soak ended or the controller came back (%s)",
				wl.Name, at.UTC().Format(timeFormat), resumeSlack, end.UTC().Format(timeFormat))
		}
	}
	if !leads.Before(lastG1) {
		t.Errorf("the relaunched controller led at %s, after g1's soak ended at %s: the kill did not fall within the soak", leads.UTC().Format(timeFormat), lastG1.UTC().Format(timeFormat))
	}
	assertAdmittedAfter(t, g2, lastG1, "g1's last Succeeded transition")
	assertSoaked(t, g2, minSuccess)
	h.checkHistory(t, rev2)
}

// A controller SIGKILLed while a Workload waits on its progressDeadline, and relaunched after
// the deadline passed, times that Workload out (a failure, within maxFailures), exactly at or
// after its admission plus progressDeadline; group g2 is admitted only once g1 is final, none of
// it skipped, and the rollout completes with the failure counted.
func TestKillDuringDeadline(t *testing.T) {
	const (
		name     = "rollout-kill-deadline"
		owners   = 4
		deadline = 10 * time.Second
		stuck    = "wl-000" // in g1; health "pending" at v2 keeps it Ready=Unknown there
	)
	ns := newNamespace(t, name)
	oneFailure := intstr.FromInt32(1)
	rolloutCase(t, name, v1alpha1.RolloutStrategy{
		Type: v1alpha1.RolloutProgressivePerGroup, Groups: groupsByLabel("g1", "g2"), MaxFailures: &oneFailure,
		ProgressDeadline: v1alpha1.ProgressDeadline(deadline.String()),
	})
	createWorkloads(t, ns, name, owners, func(i int) map[string]string {
		labels := inGroups(owners, "g1", "g2")(i)
		if workloadName(i) == stuck {
			labels[healthLabel] = "pending"
		}
		return labels
	})
	c := launchController(t, name, shortLease...)
	rev1, _ := waitComplete(t, completion{ns: ns, chain: name, owners: owners, version: "v1"}, 2*time.Minute)

	h := watchWorkloads(t, ns)
	change(t, name, 0, "v2", healthFromLabel)
	rev2 := waitTarget(t, name, rev1)
	var admitted time.Time
	eventually(t, time.Minute, func() (bool, string) {
		for _, wl := range workloads(t, ns) {
			r, ready := wl.Status.Rollout, readyCondition(&wl)
			if wl.Name != stuck {
				continue
			}
			if r == nil || r.Revision != rev2 || r.State != v1alpha1.RolloutProgressing || r.AdmittedTime == nil ||
				wl.Status.BlueprintRevision != rev2 || ready == nil || ready.Status != metav1.ConditionUnknown {
				return false, fmt.Sprintf("%s runs %q, record %s, Ready %s", stuck, wl.Status.BlueprintRevision, recordString(r), conditionString(ready))
			}
			admitted = r.AdmittedTime.Time
		}
		return true, ""
	})
	due := admitted.Add(deadline)
	if !time.Now().Before(due) {
		t.Fatalf("%s's deadline (%s) passed before the kill", stuck, due.UTC().Format(timeFormat))
	}
	// Down across the deadline: relaunched a second after it, at the API's precision.
	_, leads := c.killAndRelaunch(t, due.Add(time.Second))

	_, wls := waitComplete(t, completion{ns: ns, chain: name, target: rev2, owners: owners, version: "v2",
		states: map[string]v1alpha1.RolloutState{stuck: v1alpha1.RolloutTimeOut}}, 2*time.Minute)
	var timedOut time.Time
	for _, wl := range inGroup(wls, "g1") {
		r := wl.Status.Rollout
		if wl.Name != stuck {
			continue
		}
		timedOut = r.LastTransitionTime.Time
		if !r.AdmittedTime.Time.Equal(admitted) {
			t.Errorf("%s: %s, admitted again after %s", stuck, recordString(r), admitted.UTC().Format(timeFormat))
		}
		if timedOut.Before(due) || timedOut.After(leads.Add(resumeSlack)) {
			t.Errorf("%s: TimeOut at %s, want between its deadline %s and %s after the relaunched controller led (%s)",
				stuck, timedOut.UTC().Format(timeFormat), due.UTC().Format(timeFormat), resumeSlack, leads.UTC().Format(timeFormat))
		}
	}
	assertAdmittedAfter(t, inGroup(wls, "g2"), timedOut, stuck+"'s TimeOut, which made g1 final")
	assertSoaked(t, inGroup(wls, "g2"), 0)

	st := supplyChain(t, name).Status
	want := v1alpha1.RolloutCounts{Succeeded: owners - 1, TimeOut: 1}
	if got := st.Rollout.Counts; got != want {
		t.Errorf("supply chain counts %+v, want %+v", got, want)
	}
	if got, want := st.Rollout.FailedOwners, []string{ns + "/" + stuck}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("supply chain failedOwners %v, want %v", got, want)
	}
	if c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionRolloutDegraded); c == nil || c.Status != metav1.ConditionFalse || c.Reason != v1alpha1.ReasonRolloutNotDegraded {
		t.Errorf("RolloutDegraded %s, want False/%s (one failure, maxFailures 1)", conditionString(c), v1alpha1.ReasonRolloutNotDegraded)
	}
	h.checkHistory(t, rev2)
}
