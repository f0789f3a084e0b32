package rollout_test

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/rollout"
)

// A change reaches the canary first; the other owner keeps running the stable revision.
func ExampleDecide() {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	healthy := &metav1.Condition{Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue,
		ObservedGeneration: 1, LastTransitionTime: metav1.NewTime(now.Add(-time.Hour))}
	in := rollout.Input{
		Strategy: v1alpha1.RolloutStrategy{
			Type: v1alpha1.RolloutProgressivePerGroup,
			Groups: []v1alpha1.RolloutGroup{{Name: "canary",
				Selector: metav1.LabelSelector{MatchLabels: map[string]string{"tier": "canary"}}}},
		},
		Target:   "r2",
		Previous: &v1alpha1.BlueprintRolloutStatus{StableRevision: "r1", TargetRevision: "r1", Complete: true},
		Owners: []rollout.Owner{
			{Key: "apps/api", Running: "r1", Ready: healthy, Generation: 1},
			{Key: "apps/web", Labels: map[string]string{"tier": "canary"}, Running: "r1", Ready: healthy, Generation: 1},
		},
		Now: now,
	}
	p := rollout.Decide(in)
	for i, o := range in.Owners {
		fmt.Printf("%s: %s, stamped from %s\n", o.Key, p.Owners[i].State,
			rollout.PinnedRevision(&p.Owners[i], o.Running, &p.Status))
	}
	fmt.Println(p.Progressing.Reason+":", p.Progressing.Message)
	for _, e := range p.Events {
		fmt.Println("event", e.Reason+":", e.Message)
	}
	// Output:
	// apps/api: ToApply, stamped from r1
	// apps/web: Progressing, stamped from r2
	// Progressing: 0 of 2 owners succeeded at revision r2; group canary, chunk 1 of 1
	// event RolloutStarted: rolling out revision r2 to 2 owners; the stable revision is r1
	// event GroupStarted: group canary started: 1 of 1 owners admitted
}
