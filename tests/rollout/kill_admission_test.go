package rollout

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// A controller SIGKILLed the moment the rollout reaches a later group (g2 of g1, g2, g3, while g2's
// admissions and stamps are being written), and relaunched, resumes without admitting or
// stamping anyone twice (DESIGN §9: "All state is in the API: a controller restart resumes
// exactly"; §3: no write when the live object already holds the stamp; §6: "it catches up
// without duplicate objects"). TestKillDuringSoak kills while g1 soaks, before any admission of
// a later group; here the relaunched controller meets g2 half-admitted: at every instant of the
// API server's history no Workload's admittedTime changes once set for the target, no record
// goes back to ToApply or otherwise backwards, and nobody runs the target before it is admitted;
// every Workload's stamped ConfigMap changes exactly once for the change (v1 to v2), at or after
// its Workload's admission; the groups still soak in order, and the rollout completes.
func TestKillMidRolloutNoReadmission(t *testing.T) {
	const (
		name       = "rollout-kill-admission"
		perGroup   = 3
		minSuccess = 4 * time.Second
	)
	groups := []string{"g1", "g2", "g3"}
	owners := perGroup * len(groups)
	ns := newNamespace(t, name)
	rolloutCase(t, name, v1alpha1.RolloutStrategy{Type: v1alpha1.RolloutProgressivePerGroup, Groups: groupsByLabel(groups...)})
	createWorkloads(t, ns, name, owners, inGroups(owners, groups...))
	c := launchController(t, name, shortLease...)
	rev1, _ := waitComplete(t, completion{ns: ns, chain: name, owners: owners, version: "v1"}, 2*time.Minute)

	h := watchWorkloads(t, ns)
	stamps := watchStamps(t, ns)
	change(t, name, minSuccess, "v2", "ok")
	rev2 := waitTarget(t, name, rev1)

	// The rollout reaches g2: every g1 Workload Succeeded, a g2 Workload admitted.
	var atKill []v1alpha1.Workload
	eventually(t, time.Minute, func() (bool, string) {
		atKill = workloads(t, ns)
		g1Done, g2Admitted := 0, 0
		for _, wl := range atKill {
			r := wl.Status.Rollout
			switch wl.Labels[groupLabel] {
			case "g1":
				if r != nil && r.Revision == rev2 && r.State == v1alpha1.RolloutSucceeded {
					g1Done++
				}
			case "g2":
				if admittedTo(r, rev2) {
					g2Admitted++
				}
			}
		}
		return g1Done == perGroup && g2Admitted > 0,
			fmt.Sprintf("%d of %d g1 workloads Succeeded at %s, %d g2 workloads admitted", g1Done, perGroup, rev2, g2Admitted)
	})
	_, leads := c.killAndRelaunch(t, time.Time{})

	// Where the rollout stood at the kill: g2 in flight (admitted, none Succeeded), g3 not reached.
	admittedAtKill := map[string]*metav1.Time{}
	var stood []string
	for _, wl := range atKill {
		r, g := wl.Status.Rollout, wl.Labels[groupLabel]
		stood = append(stood, fmt.Sprintf("%s (%s) runs %q, %s", wl.Name, g, wl.Status.BlueprintRevision, recordString(r)))
		if admittedTo(r, rev2) {
			admittedAtKill[wl.Name] = r.AdmittedTime
		}
		if g == "g2" && admittedTo(r, rev2) && r.State != v1alpha1.RolloutProgressing {
			t.Errorf("at the kill %s was %s, want Progressing: the kill must fall within g2's flight", wl.Name, recordString(r))
		}
		if g == "g3" && (admittedTo(r, rev2) || wl.Status.BlueprintRevision == rev2) {
			t.Errorf("at the kill %s ran %q with record %s: g3 was reached before g2 soaked", wl.Name, wl.Status.BlueprintRevision, recordString(r))
		}
	}
	t.Logf("at the kill:\n  %s", strings.Join(stood, "\n  "))

	_, wls := waitComplete(t, completion{ns: ns, chain: name, target: rev2, owners: owners, version: "v2"}, 2*time.Minute)

	// Nobody admitted twice, backwards (ToApply included) or running r2 before its admission, at
	// any instant of the history, across the kill.
	h.checkHistory(t, rev2)
	var problems []string
	for _, wl := range wls {
		r := wl.Status.Rollout
		if before, ok := admittedAtKill[wl.Name]; ok && !r.AdmittedTime.Equal(before) {
			problems = append(problems, fmt.Sprintf("%s: %s, admitted at %s before the kill: admitted again",
				wl.Name, recordString(r), before.UTC().Format(timeFormat)))
		}
		// Stamped once for the change: the v1 ConfigMap the watch started from, then v2, no
		// other write (the relaunched controller finds every stamp in place and writes none).
		seen := stamps.of(wl.Name)
		var versions []string
		for _, s := range seen {
			versions = append(versions, s.version+"@"+s.resourceVersion)
		}
		if len(seen) != 2 || seen[0].version != "v1" || seen[1].version != "v2" {
			problems = append(problems, fmt.Sprintf("ConfigMap %s went through %v (version@resourceVersion), want one change from v1 to v2", wl.Name, versions))
			continue
		}
		if r.AdmittedTime != nil && seen[1].applied.Before(r.AdmittedTime.Time) {
			problems = append(problems, fmt.Sprintf("ConfigMap %s stamped v2 at %s, before %s was admitted (%s)",
				wl.Name, seen[1].applied.UTC().Format(timeFormat), wl.Name, recordString(r)))
		}
	}
	reportAll(t, problems)

	g1, g2, g3 := inGroup(wls, "g1"), inGroup(wls, "g2"), inGroup(wls, "g3")
	lastG1 := assertSoaked(t, g1, minSuccess)
	assertAdmittedAfter(t, g2, lastG1, "g1's last Succeeded transition")
	lastG2 := assertSoaked(t, g2, minSuccess)
	assertAdmittedAfter(t, g3, lastG2, "g2's last Succeeded transition")
	assertSoaked(t, g3, minSuccess)
	// g2 was admitted just before the kill, so its soaks begin under the relaunched controller:
	// that a soak under way resumes rather than restarts is TestKillDuringSoak's (from the
	// recorded readyTime). Here only the relaunched controller moves g2 on, and promptly: within
	// g2Slack of the soak's end or of its lead, a margin a loaded two-core machine meets (the
	// relaunched controller syncs its caches, the Workloads report Ready, and the supply chain
	// records readyTime, then Succeeded, one decision apart; 6 s was seen beside another
	// make test).
	const g2Slack = 30 * time.Second
	for _, wl := range g2 {
		at, end := wl.Status.Rollout.LastTransitionTime.Time, soakStart(wl).Add(minSuccess)
		if leads.After(end) {
			end = leads
		}
		if at.Before(leads.Truncate(time.Second)) || at.After(end.Add(g2Slack)) {
			t.Errorf("%s: Succeeded at %s, want between the relaunched controller's lead (%s) and %s after its soak ended or it led (%s)",
				wl.Name, at.UTC().Format(timeFormat), leads.UTC().Format(timeFormat), g2Slack, end.UTC().Format(timeFormat))
		}
	}
}
