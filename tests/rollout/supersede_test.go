package rollout

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// A change that supersedes one whose mandatory canary failed is gated by the canary again
// (DESIGN §9, Admission: "the new target restarts from the first group, owners keep what they run
// until their turn, and the mandatory groups gate it again"; States: "an owner that runs a
// superseded revision is never Skip"). v2 makes the canary unhealthy: it is Failed at r2 and the
// supply chain is RolloutDegraded True MandatoryGroupFailed, so nobody else is admitted. v3,
// healthy for all, is pushed while the canary still fails at r2: the canary, which runs the
// superseded r2 and is Ready=False there, enters r3 as Progressing (never Skip), and no other
// Workload runs r2 or r3, or is admitted to either, before the canary is Succeeded at r3, at any
// instant of the API server's history. Then the rollout completes at r3, every Workload at v3.
func TestSupersedeWhileCanaryFails(t *testing.T) {
	const (
		name       = "rollout-supersede"
		owners     = 5
		canary     = "wl-000" // in the mandatory group canary, labelled health=bad: unhealthy at v2 only
		minSuccess = 3 * time.Second
	)
	ns := canaryCase(t, name, owners, canary)
	launchController(t, name)
	// v1 stamps health "ok" literally: every Workload, the canary too, is healthy at r1.
	rev1, _ := waitComplete(t, completion{ns: ns, chain: name, owners: owners, version: "v1"}, 2*time.Minute)

	h := watchWorkloads(t, ns)
	// v2 reads health from the label: the canary fails there, the others would not.
	change(t, name, minSuccess, "v2", healthFromLabel)
	rev2 := waitTarget(t, name, rev1)
	waitFailed(t, ns, canary, rev2, "canary")
	sc := waitDegraded(t, name, rev2, v1alpha1.ReasonMandatoryGroupFailed, "mandatory group canary: 1 of 1 owners failed, and none may")
	if got, want := sc.Status.Rollout.FailedOwners, []string{ns + "/" + canary}; !slices.Equal(got, want) {
		t.Errorf("supply chain failedOwners %v at %s, want %v", got, rev2, want)
	}
	if got, want := sc.Status.Rollout.Counts, (v1alpha1.RolloutCounts{ToApply: owners - 1, Failed: 1}); got != want {
		t.Errorf("supply chain counts %+v at %s, want %+v", got, rev2, want)
	}

	// v3 stamps health "ok" literally again, while the canary still fails at r2.
	if wl := workload(t, ns, canary); wl.Status.Rollout == nil || wl.Status.Rollout.State != v1alpha1.RolloutFailed {
		t.Fatalf("%s is %s before v3, want still Failed at %s", canary, recordString(wl.Status.Rollout), rev2)
	}
	update(t, &v1alpha1.ClusterTemplate{}, name, func(tpl *v1alpha1.ClusterTemplate) {
		tpl.Spec = templateSpec(t, "v3", "ok")
	})
	rev3 := waitTarget(t, name, rev2)
	_, wls := waitComplete(t, completion{ns: ns, chain: name, target: rev3, owners: owners, version: "v3"}, 2*time.Minute)

	// The whole history: nobody outside the canary ever runs r2 or is admitted to it; nobody
	// outside the canary runs r3 or is admitted to it before the canary is Succeeded at r3; the
	// canary's first state at r3 is Progressing.
	var problems []string
	canaryDone := false
	var canaryAtR3 []v1alpha1.RolloutState // the canary's states at r3, each change once
	for _, o := range h.observations() {
		if o.name == canary {
			if r := o.record; r != nil && r.Revision == rev3 && r.State != v1alpha1.RolloutToApply {
				if n := len(canaryAtR3); n == 0 || canaryAtR3[n-1] != r.State {
					canaryAtR3 = append(canaryAtR3, r.State)
				}
				canaryDone = canaryDone || r.State == v1alpha1.RolloutSucceeded
			}
			continue
		}
		if o.running == rev2 || admittedTo(o.record, rev2) {
			problems = append(problems, fmt.Sprintf("%s runs %q with record %s: admitted to the superseded %s past the failed mandatory canary",
				o.name, o.running, recordString(o.record), rev2))
		}
		if !canaryDone && (o.running == rev3 || admittedTo(o.record, rev3)) {
			problems = append(problems, fmt.Sprintf("%s runs %q with record %s before %s was Succeeded at %s (its states there so far: %v)",
				o.name, o.running, recordString(o.record), canary, rev3, canaryAtR3))
		}
	}
	if want := []v1alpha1.RolloutState{v1alpha1.RolloutProgressing, v1alpha1.RolloutSucceeded}; !slices.Equal(canaryAtR3, want) {
		problems = append(problems, fmt.Sprintf("%s went through %v at %s, want %v: it runs the superseded %s, so it is never Skip",
			canary, canaryAtR3, rev3, want, rev2))
	}
	reportAll(t, problems)
	// Nobody went Skip, Failed or backwards at r3, ran it before its admission, or was admitted twice.
	h.checkHistory(t, rev3)

	canaryGroup, rest := inGroup(wls, "canary"), inGroup(wls, "rest")
	if len(canaryGroup) != 1 || len(rest) != owners-1 {
		t.Fatalf("%d workloads in group canary and %d in rest, want 1 and %d", len(canaryGroup), len(rest), owners-1)
	}
	canaryDoneAt := assertSoaked(t, canaryGroup, minSuccess)
	assertAdmittedAfter(t, rest, canaryDoneAt, canary+"'s Succeeded transition at "+rev3)
	assertSoaked(t, rest, minSuccess)

	st := supplyChain(t, name).Status
	if got, want := st.Rollout.Counts, (v1alpha1.RolloutCounts{Succeeded: owners}); got != want {
		t.Errorf("supply chain counts %+v at %s, want %+v", got, rev3, want)
	}
	if len(st.Rollout.FailedOwners) != 0 {
		t.Errorf("supply chain failedOwners %v at %s, want none", st.Rollout.FailedOwners, rev3)
	}
	if c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionRolloutDegraded); c == nil || c.Status != metav1.ConditionFalse || c.Reason != v1alpha1.ReasonRolloutNotDegraded {
		t.Errorf("RolloutDegraded %s at %s, want False/%s", conditionString(c), rev3, v1alpha1.ReasonRolloutNotDegraded)
	}
}
