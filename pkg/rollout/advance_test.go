package rollout_test

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/rollout"
)

// TestAdvance: an admitted owner's own reconcile moves its record as the planner would; an
// owner not admitted keeps its record.
func TestAdvance(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) metav1.Time { return metav1.NewTime(t0.Add(d)) }
	admitted := at(0)
	record := func(state v1alpha1.RolloutState, revision string) *v1alpha1.OwnerRolloutStatus {
		return &v1alpha1.OwnerRolloutStatus{Revision: revision, State: state, LastTransitionTime: at(0), AdmittedTime: &admitted}
	}
	soaking := func(since time.Duration) *v1alpha1.OwnerRolloutStatus {
		r := record(v1alpha1.RolloutProgressing, "r2")
		r.ReadyTime = ptr.To(at(since))
		return r
	}
	ready := func(s metav1.ConditionStatus, since time.Duration) *metav1.Condition {
		return &metav1.Condition{Type: v1alpha1.ConditionReady, Status: s, ObservedGeneration: 2, LastTransitionTime: at(since)}
	}
	strategy := v1alpha1.RolloutStrategy{Type: v1alpha1.RolloutAll, MinSuccessTime: &metav1.Duration{Duration: 10 * time.Second}}
	tests := []struct {
		name   string
		record *v1alpha1.OwnerRolloutStatus
		ready  *metav1.Condition
		now    time.Duration
		want   *v1alpha1.OwnerRolloutStatus
	}{
		{"soaked", soaking(time.Second), ready(metav1.ConditionTrue, time.Second), 11 * time.Second,
			&v1alpha1.OwnerRolloutStatus{Revision: "r2", State: v1alpha1.RolloutSucceeded, LastTransitionTime: at(11 * time.Second), AdmittedTime: &admitted, ReadyTime: ptr.To(at(time.Second))}},
		{"soaking", soaking(time.Second), ready(metav1.ConditionTrue, time.Second), 5 * time.Second, soaking(time.Second)},
		{"first seen Ready at the target: the soak starts now, however old Ready is", record(v1alpha1.RolloutProgressing, "r2"),
			ready(metav1.ConditionTrue, -time.Hour), time.Minute, soaking(time.Minute)},
		{"failed", record(v1alpha1.RolloutProgressing, "r2"), ready(metav1.ConditionFalse, time.Second), 2 * time.Second,
			&v1alpha1.OwnerRolloutStatus{Revision: "r2", State: v1alpha1.RolloutFailed, LastTransitionTime: at(2 * time.Second), AdmittedTime: &admitted}},
		{"not admitted", record(v1alpha1.RolloutToApply, "r2"), ready(metav1.ConditionTrue, time.Second), time.Minute,
			record(v1alpha1.RolloutToApply, "r2")},
		{"no record", nil, ready(metav1.ConditionTrue, time.Second), time.Minute, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			owner := rollout.Owner{Key: "ns/a", Running: "r2", Record: tc.record, Ready: tc.ready, Generation: 2}
			got := rollout.Advance(strategy, "r1", owner, t0.Add(tc.now))
			if (got == nil) != (tc.want == nil) || got != nil && (got.State != tc.want.State || got.Revision != tc.want.Revision ||
				!got.LastTransitionTime.Equal(&tc.want.LastTransitionTime) || !got.ReadyTime.Equal(tc.want.ReadyTime)) {
				t.Errorf("Advance = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestAdmit: under type All with nothing to wait for, an owner admits itself to the target it
// sees, Progressing when Ready and Skip when not; once admitted, or under any other strategy,
// its record is as it was.
func TestAdmit(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	all := v1alpha1.RolloutStrategy{Type: v1alpha1.RolloutAll}
	bp := &v1alpha1.BlueprintRolloutStatus{StableRevision: "r1", TargetRevision: "r2"}
	ready := &metav1.Condition{Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue, ObservedGeneration: 1}
	notReady := &metav1.Condition{Type: v1alpha1.ConditionReady, Status: metav1.ConditionFalse, ObservedGeneration: 1}
	old := &v1alpha1.OwnerRolloutStatus{Revision: "r1", State: v1alpha1.RolloutSucceeded}
	in := &v1alpha1.OwnerRolloutStatus{Revision: "r2", State: v1alpha1.RolloutProgressing}
	withFailures := all
	withFailures.MaxFailures = &intstr.IntOrString{IntVal: 1}
	tests := []struct {
		name     string
		strategy v1alpha1.RolloutStrategy
		record   *v1alpha1.OwnerRolloutStatus
		ready    *metav1.Condition
		want     v1alpha1.RolloutState // "" for the record unchanged
	}{
		{"ready", all, old, ready, v1alpha1.RolloutProgressing},
		{"new owner", all, nil, ready, v1alpha1.RolloutProgressing},
		{"not ready", all, old, notReady, v1alpha1.RolloutSkip},
		{"already admitted", all, in, ready, ""},
		{"paused", v1alpha1.RolloutStrategy{Type: v1alpha1.RolloutAll, Paused: true}, old, ready, ""},
		{"mandatory group", v1alpha1.RolloutStrategy{Type: v1alpha1.RolloutAll, MandatoryGroups: []string{"g"}}, old, ready, ""},
		{"All has no failure budget", withFailures, old, ready, v1alpha1.RolloutProgressing},
		{"per group", v1alpha1.RolloutStrategy{Type: v1alpha1.RolloutProgressivePerGroup}, old, ready, ""},
		{"new owner per group: waits, and says so", v1alpha1.RolloutStrategy{Type: v1alpha1.RolloutProgressivePerGroup}, nil, ready, v1alpha1.RolloutToApply},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			owner := rollout.Owner{Key: "ns/a", Running: "r1", Record: tc.record, Ready: tc.ready, Generation: 1}
			got := rollout.Admit(tc.strategy, bp, owner, now)
			if tc.want == "" {
				if got != tc.record {
					t.Errorf("Admit = %+v, want the record unchanged %+v", got, tc.record)
				}
				return
			}
			if got == nil || got.Revision != "r2" || got.State != tc.want || !got.LastTransitionTime.Time.Equal(now) {
				t.Errorf("Admit = %+v, want %s at r2 since %s", got, tc.want, now)
			}
		})
	}
}

// TestAdmitStale: under type All a new owner whose first status was written before its blueprint
// was reconciled (Ready Unknown, SupplyChainNotReconciled) admits itself all the same: nothing
// else would admit it.
func TestAdmitStale(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	bp := &v1alpha1.BlueprintRolloutStatus{StableRevision: "r1", TargetRevision: "r1", Complete: true}
	owner := rollout.Owner{Key: "ns/a", Generation: 1, Stale: true,
		Ready: &metav1.Condition{Type: v1alpha1.ConditionReady, Status: metav1.ConditionUnknown, ObservedGeneration: 1}}
	got := rollout.Admit(v1alpha1.RolloutStrategy{Type: v1alpha1.RolloutAll}, bp, owner, now)
	if got == nil || got.Revision != "r1" || got.State != v1alpha1.RolloutSkip {
		t.Errorf("Admit = %+v, want Skip at r1", got)
	}
}
