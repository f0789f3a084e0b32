package web_test

import (
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/view"
	"github.com/surveyor-dev/surveyor/pkg/web"
)

func TestStates(t *testing.T) {
	ready := workload("dev", "ready", True, "")
	failed := workload("dev", "failed", False, "bad")
	failedJob := workload("dev", "job", False, "Job failed")
	failedJob.Status.Conditions = append(failedJob.Status.Conditions, cond(v1alpha1.ConditionComplete, True, 1, "ConditionRulesPassed", ""))
	admitted := workload("dev", "admitted", Unknown, "")
	admitted.Status.Rollout = &v1alpha1.OwnerRolloutStatus{State: v1alpha1.RolloutProgressing, Revision: "r2"}
	waiting := workload("dev", "to-apply", True, "")
	waiting.Status.Rollout = &v1alpha1.OwnerRolloutStatus{State: v1alpha1.RolloutToApply, Revision: "r1"}
	newGen := workload("dev", "new-generation", Unknown, "")
	newGen.Generation, newGen.Status.ObservedGeneration, newGen.Status.Conditions[3].ObservedGeneration = 2, 2, 2
	newGenFailing := workload("dev", "new-generation-failing", False, "bad")
	newGenFailing.Generation, newGenFailing.Status.ObservedGeneration, newGenFailing.Status.Conditions[3].ObservedGeneration = 2, 2, 2
	newGenFailing.Status.Conditions[4] = cond(v1alpha1.ConditionAvailable, True, 1, "HealthyAtGeneration", "")
	newGen.Status.Conditions[4] = cond(v1alpha1.ConditionAvailable, True, 1, "HealthyAtGeneration", "")
	lagging := workload("dev", "lagging", True, "")
	lagging.Generation = 2

	tests := []struct {
		owner view.Owner
		want  []web.State
	}{
		{ready, []web.State{web.StateReady}},
		{failed, []web.State{web.StateNotReady, web.StateUnhealthy}},
		{failedJob, []web.State{web.StateNotReady, web.StateUnhealthy, web.StateComplete}},
		{admitted, []web.State{web.StateNotReady, web.StateRollingOut}},
		{waiting, []web.State{web.StateReady}},
		{newGen, []web.State{web.StateNotReady, web.StateRollingOut}},
		{newGenFailing, []web.State{web.StateNotReady, web.StateUnhealthy}},
		{lagging, []web.State{web.StateNotReady, web.StateRollingOut}},
	}
	for _, tt := range tests {
		t.Run(tt.owner.Name, func(t *testing.T) {
			var got []web.State
			for _, s := range web.States[1:] {
				if s.Has(tt.owner) {
					got = append(got, s)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("states %v, want %v", got, tt.want)
			}
		})
	}
}

// BenchmarkListPage renders the first page of the list over 5,000 Workloads, as the
// server does for a first paint and for every event of a list page.
func BenchmarkListPage(b *testing.B) {
	store := web.NewStore()
	for i := range 5000 {
		store.SetOwner(workload(fmt.Sprintf("ns-%d", i%10), fmt.Sprintf("w-%04d", i), True, ""))
	}
	srv, err := web.NewServer(b.Context(), store, web.Options{})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, httptest.NewRequest("GET", "http://127.0.0.1/", nil))
		if w.Code != 200 {
			b.Fatal(w.Code)
		}
	}
}
