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
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// supplyChain reads the supply chain name.
func supplyChain(t *testing.T, name string) *v1alpha1.ClusterSupplyChain {
	t.Helper()
	sc := &v1alpha1.ClusterSupplyChain{}
	if err := k8s.Get(ctx, client.ObjectKey{Name: name}, sc); err != nil {
		t.Fatal(err)
	}
	return sc
}

// waitTarget waits until the supply chain rolls out a revision other than old, and returns it.
func waitTarget(t *testing.T, chain, old string) string {
	t.Helper()
	var target string
	eventually(t, time.Minute, func() (bool, string) {
		if r := supplyChain(t, chain).Status.Rollout; r != nil {
			target = r.TargetRevision
		}
		return target != "" && target != old, fmt.Sprintf("target revision %q", target)
	})
	return target
}

// workloads lists ns's Workloads sorted by name.
func workloads(t *testing.T, ns string) []v1alpha1.Workload {
	t.Helper()
	var list v1alpha1.WorkloadList
	if err := k8s.List(ctx, &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(list.Items, func(a, b v1alpha1.Workload) int { return strings.Compare(a.Name, b.Name) })
	return list.Items
}

// completion is what a finished rollout looks like.
type completion struct {
	ns, chain string
	// target is the revision rolled out; "" for whatever the supply chain targets.
	target string
	// owners is how many Workloads there are.
	owners int
	// version is what every stamped ConfigMap holds.
	version string
	// states are the final states of the Workloads that do not end Succeeded, by name.
	states map[string]v1alpha1.RolloutState
}

// waitComplete waits until the rollout is complete: the supply chain says so (complete, the
// target is stable, RolloutProgressing False RolloutComplete at its generation), every Workload
// runs the target and is in its final state there, and every stamped ConfigMap holds the
// version. It returns the target and the Workloads as they ended.
func waitComplete(t *testing.T, want completion, timeout time.Duration) (string, []v1alpha1.Workload) {
	t.Helper()
	var wls []v1alpha1.Workload
	target := want.target
	eventually(t, timeout, func() (bool, string) {
		sc := supplyChain(t, want.chain)
		r := sc.Status.Rollout
		if r == nil || !r.Complete || r.StableRevision != r.TargetRevision || (want.target != "" && r.TargetRevision != want.target) {
			return false, fmt.Sprintf("supply chain rollout %+v", r)
		}
		target = r.TargetRevision
		c := meta.FindStatusCondition(sc.Status.Conditions, v1alpha1.ConditionRolloutProgressing)
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != v1alpha1.ReasonRolloutComplete || c.ObservedGeneration != sc.Generation {
			return false, fmt.Sprintf("RolloutProgressing %+v at generation %d", c, sc.Generation)
		}
		if wls = workloads(t, want.ns); len(wls) != want.owners {
			return false, fmt.Sprintf("%d workloads, want %d", len(wls), want.owners)
		}
		for _, wl := range wls {
			state := v1alpha1.RolloutSucceeded
			if s, ok := want.states[wl.Name]; ok {
				state = s
			}
			if r := wl.Status.Rollout; r == nil || r.Revision != target || r.State != state || wl.Status.BlueprintRevision != target {
				return false, fmt.Sprintf("workload %s runs %q, record %s; want %s at %s", wl.Name, wl.Status.BlueprintRevision, recordString(r), state, target)
			}
		}
		var cms corev1.ConfigMapList
		if err := k8s.List(ctx, &cms, client.InNamespace(want.ns), client.MatchingLabels{v1alpha1.LabelSupplyChainName: want.chain}); err != nil {
			return false, err.Error()
		}
		stale := 0
		for _, cm := range cms.Items {
			if cm.Data["version"] != want.version {
				stale++
			}
		}
		return len(cms.Items) == want.owners && stale == 0,
			fmt.Sprintf("%d stamped ConfigMaps, %d not at %s; want %d", len(cms.Items), stale, want.version, want.owners)
	})
	return target, wls
}

// soakStart is when a Workload's soak at its record's revision began, as the planner measures
// it: the later of its admission and its Ready transition.
func soakStart(wl *v1alpha1.Workload) time.Time {
	start := wl.Status.Rollout.AdmittedTime.Time
	if c := readyCondition(wl); c != nil && c.LastTransitionTime.After(start) {
		start = c.LastTransitionTime.Time
	}
	return start
}

// inGroup are the Workloads whose record puts them in group.
func inGroup(wls []v1alpha1.Workload, group string) []*v1alpha1.Workload {
	var out []*v1alpha1.Workload
	for i := range wls {
		if wls[i].Status.Rollout.Group == group {
			out = append(out, &wls[i])
		}
	}
	return out
}

// assertSoaked checks that every Workload reached Succeeded no earlier than minSuccess after its
// soak began, and returns the last of those transitions.
func assertSoaked(t *testing.T, wls []*v1alpha1.Workload, minSuccess time.Duration) time.Time {
	t.Helper()
	var last time.Time
	for _, wl := range wls {
		r := wl.Status.Rollout
		if r.State != v1alpha1.RolloutSucceeded {
			t.Errorf("%s: %s, want Succeeded", wl.Name, recordString(r))
			continue
		}
		if start := soakStart(wl); r.LastTransitionTime.Time.Before(start.Add(minSuccess)) {
			t.Errorf("%s: Succeeded at %s, %s after its soak began (%s); minSuccessTime is %s",
				wl.Name, r.LastTransitionTime.UTC().Format(timeFormat), r.LastTransitionTime.Sub(start), start.UTC().Format(timeFormat), minSuccess)
		}
		if r.LastTransitionTime.After(last) {
			last = r.LastTransitionTime.Time
		}
	}
	return last
}

// assertAdmittedAfter checks that no Workload was admitted before t0.
func assertAdmittedAfter(t *testing.T, wls []*v1alpha1.Workload, t0 time.Time, why string) {
	t.Helper()
	for _, wl := range wls {
		if r := wl.Status.Rollout; r.AdmittedTime == nil || r.AdmittedTime.Time.Before(t0) {
			t.Errorf("%s: %s, admitted before %s (%s)", wl.Name, recordString(r), t0.UTC().Format(timeFormat), why)
		}
	}
}

// isReady says whether the Workload is Ready=True at its current generation.
func isReady(wl *v1alpha1.Workload) bool {
	c := readyCondition(wl)
	return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == wl.Generation
}
