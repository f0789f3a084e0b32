package rollout

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// An edit of a Failed owner that keeps failing never turns Failed into Progressing (DESIGN §9,
// Evidence: "While Ready lags the generation ... the owner's state holds: an edit never turns
// Failed into Progressing. A Failed owner leaves Failed only when Ready is observed at its
// generation and is not False"). The mandatory canary fails at r2; its spec is edited (a new
// spec.env entry, which bumps metadata.generation but not what it stamps). From before the edit
// until a while after the controller wrote Ready=False at the new generation, at every instant of
// the API server's history, the canary's record stays exactly what it was (Failed at r2, same
// transition time), the supply chain stays RolloutDegraded True MandatoryGroupFailed with the same
// message, and no other Workload is admitted. Then the canary is made healthy (its health label,
// which changes no generation): it leaves Failed, soaks, and the rollout completes at r2.
func TestFailedOwnerEditedStaysFailed(t *testing.T) {
	const (
		name       = "rollout-failed-edit"
		owners     = 3
		canary     = "wl-000" // in the mandatory group canary, labelled health=bad
		minSuccess = 3 * time.Second
		degraded   = "mandatory group canary: 1 of 1 owners failed, and none may"
		// holdWindow is how long the test keeps looking once the controller observed the edit.
		// Every write of the canary (the edit, then its new status) makes the supply chain decide
		// again a second later (ownerBatch), and it writes every record; nothing in this rollout
		// waits on a timer (no deadline, no soak in flight). A wrong transition would therefore
		// be written well within the window.
		holdWindow = 5 * time.Second
	)
	ns := canaryCase(t, name, owners, canary)
	launchController(t, name)
	rev1, _ := waitComplete(t, completion{ns: ns, chain: name, owners: owners, version: "v1"}, 2*time.Minute)

	h, sch := watchWorkloads(t, ns), watchSupplyChain(t, name)
	change(t, name, minSuccess, "v2", healthFromLabel)
	rev2 := waitTarget(t, name, rev1)
	failed := waitFailed(t, ns, canary, rev2, "canary").Status.Rollout.DeepCopy()
	waitDegraded(t, name, rev2, v1alpha1.ReasonMandatoryGroupFailed, degraded)

	// The edit: a new generation that stamps the same (unhealthy) ConfigMap. (Where the histories
	// stood then is only for the failure message: the watches deliver asynchronously.)
	canaryMark, chainMark := len(h.observations()), len(sch.observations())
	edited := updateWorkload(t, ns, canary, func(wl *v1alpha1.Workload) {
		wl.Spec.Env = append(wl.Spec.Env, corev1.EnvVar{Name: "EDITED", Value: "1"})
	})
	gen := edited.Generation
	if gen <= 1 {
		t.Fatalf("%s at generation %d after its spec was edited", canary, gen)
	}
	// The controller observed the edit: Ready=False at the new generation.
	eventually(t, time.Minute, func() (bool, string) {
		wl := workload(t, ns, canary)
		c := readyCondition(wl)
		return wl.Generation == gen && c != nil && c.ObservedGeneration == gen && c.Status == metav1.ConditionFalse,
			fmt.Sprintf("%s at generation %d, Ready %s at generation %d; want False at generation %d", canary, wl.Generation, conditionString(c), observedGeneration(c), gen)
	})
	sameRecord := func(r *v1alpha1.OwnerRolloutStatus) bool {
		return r != nil && r.Revision == failed.Revision && r.State == v1alpha1.RolloutFailed && r.Group == failed.Group &&
			r.LastTransitionTime.Equal(&failed.LastTransitionTime) && r.AdmittedTime.Equal(failed.AdmittedTime)
	}
	sameDegraded := func(c *metav1.Condition) bool {
		return c != nil && c.Status == metav1.ConditionTrue && c.Reason == v1alpha1.ReasonMandatoryGroupFailed && c.Message == degraded
	}
	holds(t, holdWindow, 250*time.Millisecond, func() (bool, string) {
		for _, wl := range workloads(t, ns) {
			r := wl.Status.Rollout
			if wl.Name == canary && !sameRecord(r) {
				return false, fmt.Sprintf("%s left %s: %s; Ready %s at generation %d (generation %d)",
					canary, recordString(failed), recordString(r), conditionString(readyCondition(&wl)), observedGeneration(readyCondition(&wl)), wl.Generation)
			}
			if wl.Name != canary && (admittedTo(r, rev2) || wl.Status.BlueprintRevision == rev2) {
				return false, fmt.Sprintf("%s runs %q with record %s past the failed mandatory canary", wl.Name, wl.Status.BlueprintRevision, recordString(r))
			}
		}
		sc := supplyChain(t, name)
		c := meta.FindStatusCondition(sc.Status.Conditions, v1alpha1.ConditionRolloutDegraded)
		return sameDegraded(c), fmt.Sprintf("supply chain RolloutDegraded %s, want True/%s %q", conditionString(c), v1alpha1.ReasonMandatoryGroupFailed, degraded)
	})

	// Every instant so far (the histories are read before anything else changes): the canary,
	// once Failed, stays Failed with the same record; nobody else runs r2 or is admitted to it;
	// the supply chain, once degraded, stays degraded, targeting r2, with one failure and nobody
	// else admitted.
	var problems, canaryLog []string
	wasFailed := false
	for i, o := range h.observations() {
		if i == canaryMark {
			canaryLog = append(canaryLog, "(about here, the edit)")
		}
		if o.name != canary {
			if o.running == rev2 || admittedTo(o.record, rev2) {
				problems = append(problems, fmt.Sprintf("%s runs %q with record %s past the failed mandatory canary", o.name, o.running, recordString(o.record)))
			}
			continue
		}
		canaryLog = append(canaryLog, fmt.Sprintf("runs %q, record %s, Ready %s at generation %d",
			o.running, recordString(o.record), conditionString(o.ready), observedGeneration(o.ready)))
		if wasFailed && !sameRecord(o.record) {
			problems = append(problems, fmt.Sprintf("%s left %s: %s; Ready %s at generation %d",
				canary, recordString(failed), recordString(o.record), conditionString(o.ready), observedGeneration(o.ready)))
		}
		wasFailed = wasFailed || sameRecord(o.record)
	}
	if !wasFailed {
		problems = append(problems, fmt.Sprintf("the history never shows %s %s", canary, recordString(failed)))
	}
	chainLog, wasDegraded := sch.observations(), false
	for _, o := range chainLog {
		if wasDegraded = wasDegraded || sameDegraded(o.degraded); !wasDegraded {
			continue
		}
		if !sameDegraded(o.degraded) {
			problems = append(problems, fmt.Sprintf("supply chain at generation %d: RolloutDegraded %s, want True/%s %q",
				o.generation, conditionString(o.degraded), v1alpha1.ReasonMandatoryGroupFailed, degraded))
		}
		want := v1alpha1.RolloutCounts{ToApply: owners - 1, Failed: 1}
		if r := o.rollout; r == nil || r.TargetRevision != rev2 || r.Counts != want || !slices.Equal(r.FailedOwners, []string{ns + "/" + canary}) {
			problems = append(problems, fmt.Sprintf("supply chain at generation %d: rollout %+v, want target %s, counts %+v, failedOwners [%s/%s]",
				o.generation, r, rev2, want, ns, canary))
		}
	}
	if !wasDegraded {
		problems = append(problems, fmt.Sprintf("the supply chain's history never shows RolloutDegraded True/%s %q", v1alpha1.ReasonMandatoryGroupFailed, degraded))
	}
	reportAll(t, problems)
	if t.Failed() {
		var chainStates []string
		for i, o := range chainLog {
			if i == chainMark {
				chainStates = append(chainStates, "(about here, the edit)")
			}
			chainStates = append(chainStates, fmt.Sprintf("generation %d, RolloutDegraded %s, rollout %+v", o.generation, conditionString(o.degraded), o.rollout))
		}
		t.Fatalf("%s edited to generation %d.\n%s went through:\n  %s\nthe supply chain went through:\n  %s",
			canary, gen, canary, strings.Join(canaryLog, "\n  "), strings.Join(chainStates, "\n  "))
	}

	// Healthy again (the label the template reads; the generation does not change): the canary
	// leaves Failed for Progressing, soaks, and the rest follow.
	updateWorkload(t, ns, canary, func(wl *v1alpha1.Workload) { wl.Labels[healthLabel] = "ok" })
	_, wls := waitComplete(t, completion{ns: ns, chain: name, target: rev2, owners: owners, version: "v2"}, 2*time.Minute)
	canaryDoneAt := assertSoaked(t, inGroup(wls, "canary"), minSuccess)
	assertAdmittedAfter(t, inGroup(wls, "rest"), canaryDoneAt, canary+"'s Succeeded transition")
	if c := meta.FindStatusCondition(supplyChain(t, name).Status.Conditions, v1alpha1.ConditionRolloutDegraded); c == nil || c.Status != metav1.ConditionFalse || c.Reason != v1alpha1.ReasonRolloutNotDegraded {
		t.Errorf("RolloutDegraded %s once complete, want False/%s", conditionString(c), v1alpha1.ReasonRolloutNotDegraded)
	}
}
