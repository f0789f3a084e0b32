package realizer

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// TestBlueprintSeen checks which changes to a supply chain re-queue its owners: what its
// status says of its spec, not the spec alone and not its rollout's progress.
func TestBlueprintSeen(t *testing.T) {
	ready := metav1.Condition{Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonReady}
	base := func() *v1alpha1.ClusterSupplyChain {
		return &v1alpha1.ClusterSupplyChain{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Generation: 3, Labels: map[string]string{"team": "a"}},
			Status: v1alpha1.BlueprintStatus{
				ObservedGeneration: 3,
				Conditions:         []metav1.Condition{ready},
				Rollout:            &v1alpha1.BlueprintRolloutStatus{StableRevision: "web-1", TargetRevision: "web-2"},
			},
		}
	}
	cases := []struct {
		name   string
		change func(sc *v1alpha1.ClusterSupplyChain)
		want   bool
	}{
		{"a new spec, not yet checked", func(sc *v1alpha1.ClusterSupplyChain) { sc.Generation = 4 }, false},
		{"its status catching up with a new spec", func(sc *v1alpha1.ClusterSupplyChain) {
			sc.Generation, sc.Status.ObservedGeneration = 4, 4
		}, true},
		{"Ready changing", func(sc *v1alpha1.ClusterSupplyChain) {
			sc.Status.Conditions[0].Status = metav1.ConditionFalse
		}, true},
		{"a new target revision", func(sc *v1alpha1.ClusterSupplyChain) { sc.Status.Rollout.TargetRevision = "web-3" }, true},
		{"a new stable revision", func(sc *v1alpha1.ClusterSupplyChain) { sc.Status.Rollout.StableRevision = "web-2" }, true},
		{"the rollout's progress", func(sc *v1alpha1.ClusterSupplyChain) {
			sc.Status.Rollout.Counts.Succeeded = 7
			sc.Status.Conditions = append(sc.Status.Conditions, metav1.Condition{Type: v1alpha1.ConditionRolloutProgressing, Status: metav1.ConditionTrue})
		}, false},
		{"a label", func(sc *v1alpha1.ClusterSupplyChain) { sc.Labels["team"] = "b" }, true},
		{"an annotation", func(sc *v1alpha1.ClusterSupplyChain) { sc.Annotations = map[string]string{"touched": "now"} }, true},
	}
	p := blueprintSeen(v1alpha1.SupplyChains)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			old, changed := base(), base()
			tc.change(changed)
			if got := p.Update(event.UpdateEvent{ObjectOld: old, ObjectNew: changed}); got != tc.want {
				t.Errorf("re-queues the owners: %v, want %v", got, tc.want)
			}
		})
	}
}

// TestWrites: a decision writes no ToApply record (an owner not admitted keeps what it has,
// DESIGN §9 Cost), the transitions of admitted owners, and admissions, whatever the strategy:
// the blueprint reconciler is the only writer of records.
func TestWrites(t *testing.T) {
	wl := func(rec *v1alpha1.OwnerRolloutStatus) v1alpha1.Owner {
		return &v1alpha1.Workload{Status: v1alpha1.WorkloadStatus{OwnerStatus: v1alpha1.OwnerStatus{Rollout: rec}}}
	}
	at := func(rev string, s v1alpha1.RolloutState) *v1alpha1.OwnerRolloutStatus {
		return &v1alpha1.OwnerRolloutStatus{Revision: rev, State: s}
	}
	owners := []v1alpha1.Owner{
		wl(at("r1", v1alpha1.RolloutSucceeded)),   // not admitted to r2, stays so
		wl(nil),                                   // new, not admitted
		wl(at("r2", v1alpha1.RolloutProgressing)), // admitted, moves
		wl(at("r1", v1alpha1.RolloutSucceeded)),   // admitted now
	}
	records := []v1alpha1.OwnerRolloutStatus{
		*at("r2", v1alpha1.RolloutToApply), *at("r2", v1alpha1.RolloutToApply),
		*at("r2", v1alpha1.RolloutSucceeded), *at("r2", v1alpha1.RolloutProgressing),
	}
	transitions, admissions := writes(owners, records)
	if fmt.Sprint(transitions) != "[2]" || fmt.Sprint(admissions) != "[3]" {
		t.Errorf("transitions %v, admissions %v; want [2], [3]", transitions, admissions)
	}
}
