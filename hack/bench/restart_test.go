package main

import (
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// convergedStatus is a converged bench Workload's status: Ready, one resource Healthy, a
// rollout record, all since t0.
func convergedStatus(t0 metav1.Time) *v1alpha1.WorkloadStatus {
	cond := func(typ string, status metav1.ConditionStatus, reason string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: "", LastTransitionTime: t0, ObservedGeneration: 1}
	}
	st := &v1alpha1.WorkloadStatus{}
	st.ObservedGeneration = 1
	st.Conditions = []metav1.Condition{
		cond(v1alpha1.ConditionReady, metav1.ConditionTrue, "Ready"),
		cond(v1alpha1.ConditionResourcesHealthy, metav1.ConditionTrue, "Healthy"),
	}
	st.Resources = []v1alpha1.ResourceStatus{{Name: "config", Conditions: []metav1.Condition{cond("Healthy", metav1.ConditionTrue, "Healthy")}}}
	st.Rollout = &v1alpha1.OwnerRolloutStatus{Revision: "bench-1", State: v1alpha1.RolloutSucceeded, LastTransitionTime: t0}
	return st
}

func TestStatusTransitions(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	t1 := metav1.NewTime(t0.Add(time.Minute))
	for _, tt := range []struct {
		name   string
		change func(st *v1alpha1.WorkloadStatus)
		want   []string
	}{
		{"nothing", func(*v1alpha1.WorkloadStatus) {}, nil},
		{"a message or generation alone is no transition", func(st *v1alpha1.WorkloadStatus) {
			st.Conditions[0].Message = "all good"
			st.Conditions[0].ObservedGeneration = 2
			st.ObservedGeneration = 2
		}, nil},
		{"Ready flaps to Unknown", func(st *v1alpha1.WorkloadStatus) {
			st.Conditions[0].Status, st.Conditions[0].Reason, st.Conditions[0].LastTransitionTime = metav1.ConditionUnknown, "KindNotServed", t1
		}, []string{v1alpha1.ConditionReady}},
		{"reason alone", func(st *v1alpha1.WorkloadStatus) { st.Conditions[1].Reason = "Other" }, []string{v1alpha1.ConditionResourcesHealthy}},
		{"lastTransitionTime alone", func(st *v1alpha1.WorkloadStatus) { st.Conditions[1].LastTransitionTime = t1 }, []string{v1alpha1.ConditionResourcesHealthy}},
		{"a condition added and one removed", func(st *v1alpha1.WorkloadStatus) {
			st.Conditions = []metav1.Condition{st.Conditions[0], {Type: "Complete", Status: metav1.ConditionFalse, Reason: "Waiting", LastTransitionTime: t1}}
		}, []string{"Complete", v1alpha1.ConditionResourcesHealthy}},
		{"a resource's condition", func(st *v1alpha1.WorkloadStatus) {
			st.Resources[0].Conditions[0].Status = metav1.ConditionFalse
		}, []string{"resource config Healthy"}},
		{"a resource gone", func(st *v1alpha1.WorkloadStatus) { st.Resources = nil }, []string{"resource config Healthy"}},
		{"the rollout record moves", func(st *v1alpha1.WorkloadStatus) {
			st.Rollout.State, st.Rollout.LastTransitionTime = v1alpha1.RolloutProgressing, t1
		}, []string{"rollout"}},
		{"the rollout record goes", func(st *v1alpha1.WorkloadStatus) { st.Rollout = nil }, []string{"rollout"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			old, cur := convergedStatus(t0), convergedStatus(t0)
			tt.change(cur)
			if got := statusTransitions(old, cur); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("statusTransitions = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestTransitionLog(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	l := &transitionLog{by: map[string]int{}, changed: map[string]bool{}}
	same, msg, flap := convergedStatus(t0), convergedStatus(t0), convergedStatus(t0)
	msg.Conditions[0].Message = "reworded"
	flap.Conditions[0].Status = metav1.ConditionUnknown
	flap.Rollout.State = v1alpha1.RolloutProgressing
	l.add("w-00000", convergedStatus(t0), same) // a resync: not a change
	l.add("w-00001", convergedStatus(t0), msg)  // a change, no transition
	l.add("w-00002", convergedStatus(t0), flap) // two transitions
	l.add("w-00002", flap, convergedStatus(t0)) // and back: two more
	if l.total() != 4 || l.by[v1alpha1.ConditionReady] != 2 || l.by["rollout"] != 2 {
		t.Errorf("transitions %d by %v, want 4: Ready 2, rollout 2", l.total(), l.by)
	}
	if l.changes != 3 || len(l.changed) != 2 {
		t.Errorf("%d changes to %d Workloads, want 3 to 2", l.changes, len(l.changed))
	}
}

func TestWritesOf(t *testing.T) {
	got := writesOf(map[string]float64{
		"GET workloads": 5, "LIST configmaps": 1, "WATCH configmaps": 2,
		"PUT workloads/status": 3, "APPLY configmaps": 2, "POST events": 1, "PUT leases": 9, "PATCH services": 0,
	})
	want := map[string]float64{"PUT workloads/status": 3, "APPLY configmaps": 2, "POST events": 1}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("writesOf = %v, want %v", got, want)
	}
}
