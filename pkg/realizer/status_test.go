package realizer

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/render"
)

func cond(typ string, status metav1.ConditionStatus, reason, message string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: message}
}

func TestWorkloadStatus(t *testing.T) {
	const gen = 3
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	now := metav1.NewTime(t0.Add(time.Minute))
	scReady := cond(v1alpha1.ConditionSupplyChainReady, metav1.ConditionTrue, v1alpha1.ReasonReady, "")
	ok := func(name string) *render.Result {
		return &render.Result{
			Status:    v1alpha1.ResourceStatus{Name: name, ObservedGeneration: gen},
			Submitted: cond(v1alpha1.ConditionResourceSubmitted, metav1.ConditionTrue, v1alpha1.ReasonResourceSubmissionComplete, ""),
			Healthy:   cond(v1alpha1.ConditionHealthy, metav1.ConditionTrue, v1alpha1.ReasonOutputsAvailable, ""),
			Values:    map[string]any{"config": "x"},
		}
	}
	rejected := ok("deployer")
	rejected.Submitted = cond(v1alpha1.ConditionResourceSubmitted, metav1.ConditionFalse, v1alpha1.ReasonTemplateRejectedByAPIServer, "forbidden")
	rejected.Healthy = cond(v1alpha1.ConditionHealthy, metav1.ConditionUnknown, v1alpha1.ReasonNoStampedObject, "no object has been stamped yet")

	notMet := ok("deployer")
	notMet.Values = nil
	notMet.Submitted = cond(v1alpha1.ConditionResourceSubmitted, metav1.ConditionUnknown, v1alpha1.ReasonConditionNotMet, "input [spec.a] and output [status.a] do not match: 1 != 2")
	notMet.Healthy = cond(v1alpha1.ConditionHealthy, metav1.ConditionUnknown, v1alpha1.ReasonOutputNotAvailable, "waiting for the object's outputs")
	passed := ok("tester")
	passed.PassThrough = true
	passed.Submitted = cond(v1alpha1.ConditionResourceSubmitted, metav1.ConditionTrue, v1alpha1.ReasonPassThrough, "")
	passed.Healthy = cond(v1alpha1.ConditionHealthy, metav1.ConditionUnknown, v1alpha1.ReasonNoStampedObject, "never reported")
	deliveryReady := cond(v1alpha1.ConditionDeliveryReady, metav1.ConditionTrue, v1alpha1.ReasonReady, "")

	tests := []struct {
		name string
		kind *v1alpha1.OwnerKind
		prev v1alpha1.OwnerStatus
		obs  observation
		want []metav1.Condition
		// wantResource are the last resource's conditions, when set.
		wantResource []metav1.Condition
	}{
		{
			name: "no supply chain matches",
			obs: observation{
				blueprint:     cond(v1alpha1.ConditionSupplyChainReady, metav1.ConditionFalse, v1alpha1.ReasonSupplyChainNotFound, "no supply chain found"),
				keepResources: true,
			},
			want: []metav1.Condition{
				cond(v1alpha1.ConditionSupplyChainReady, metav1.ConditionFalse, v1alpha1.ReasonSupplyChainNotFound, "no supply chain found"),
				cond(v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonSupplyChainNotFound, "no supply chain found"),
				cond(v1alpha1.ConditionAvailable, metav1.ConditionFalse, v1alpha1.ReasonNotYetAvailable, "no generation has been healthy yet"),
			},
		},
		{
			name: "every resource submitted and healthy",
			obs:  observation{blueprint: scReady, resources: []*render.Result{ok("source"), ok("config")}},
			want: []metav1.Condition{
				scReady,
				cond(v1alpha1.ConditionResourcesSubmitted, metav1.ConditionTrue, v1alpha1.ReasonResourceSubmissionComplete, ""),
				cond(v1alpha1.ConditionResourcesHealthy, metav1.ConditionTrue, v1alpha1.ReasonHealthyConditionRule, ""),
				cond(v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonReady, ""),
				cond(v1alpha1.ConditionAvailable, metav1.ConditionTrue, v1alpha1.ReasonHealthyAtGeneration, "all resources were healthy at generation 3"),
			},
		},
		{
			name: "a rejected resource decides ResourcesSubmitted and Ready",
			obs:  observation{blueprint: scReady, resources: []*render.Result{ok("source"), rejected}},
			want: []metav1.Condition{
				scReady,
				cond(v1alpha1.ConditionResourcesSubmitted, metav1.ConditionFalse, v1alpha1.ReasonTemplateRejectedByAPIServer, "forbidden"),
				cond(v1alpha1.ConditionResourcesHealthy, metav1.ConditionUnknown, v1alpha1.ReasonHealthyConditionRule, "resource [deployer] health is unknown: no object has been stamped yet"),
				cond(v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonTemplateRejectedByAPIServer, "forbidden"),
				cond(v1alpha1.ConditionAvailable, metav1.ConditionFalse, v1alpha1.ReasonNotYetAvailable, "no generation has been healthy yet"),
			},
		},
		{
			name: "a deployment not yet succeeded is named by resource",
			kind: v1alpha1.Deliverables,
			obs:  observation{blueprint: deliveryReady, resources: []*render.Result{ok("source"), notMet}},
			want: []metav1.Condition{
				deliveryReady,
				cond(v1alpha1.ConditionResourcesSubmitted, metav1.ConditionUnknown, v1alpha1.ReasonConditionNotMet, "resource [deployer] condition not met: input [spec.a] and output [status.a] do not match: 1 != 2"),
				cond(v1alpha1.ConditionResourcesHealthy, metav1.ConditionUnknown, v1alpha1.ReasonHealthyConditionRule, "resource [deployer] health is unknown: waiting for the object's outputs"),
				cond(v1alpha1.ConditionReady, metav1.ConditionUnknown, v1alpha1.ReasonConditionNotMet, "resource [deployer] condition not met: input [spec.a] and output [status.a] do not match: 1 != 2"),
				cond(v1alpha1.ConditionAvailable, metav1.ConditionFalse, v1alpha1.ReasonNotYetAvailable, "no generation has been healthy yet"),
			},
		},
		{
			name: "a pass-through resource is not judged",
			obs:  observation{blueprint: scReady, resources: []*render.Result{ok("source"), passed}},
			want: []metav1.Condition{
				scReady,
				cond(v1alpha1.ConditionResourcesSubmitted, metav1.ConditionTrue, v1alpha1.ReasonResourceSubmissionComplete, ""),
				cond(v1alpha1.ConditionResourcesHealthy, metav1.ConditionTrue, v1alpha1.ReasonHealthyConditionRule, ""),
				cond(v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonReady, ""),
				cond(v1alpha1.ConditionAvailable, metav1.ConditionTrue, v1alpha1.ReasonHealthyAtGeneration, "all resources were healthy at generation 3"),
			},
			wantResource: []metav1.Condition{
				cond(v1alpha1.ConditionResourceSubmitted, metav1.ConditionTrue, v1alpha1.ReasonPassThrough, ""),
				cond(v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonReady, ""),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kind := tt.kind
			if kind == nil {
				kind = v1alpha1.Workloads
			}
			got := ownerStatus(kind, &tt.prev, &tt.obs, gen, now, false)
			ignore := cmpopts.IgnoreFields(metav1.Condition{}, "LastTransitionTime", "ObservedGeneration")
			if diff := cmp.Diff(tt.want, got.Conditions, ignore); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
			if tt.wantResource != nil {
				last := got.Resources[len(got.Resources)-1].Conditions
				if diff := cmp.Diff(tt.wantResource, last, ignore); diff != "" {
					t.Errorf("last resource's conditions (-want +got):\n%s", diff)
				}
			}
			if got.ObservedGeneration != gen {
				t.Errorf("observedGeneration = %d, want %d", got.ObservedGeneration, gen)
			}
		})
	}
}

// A condition's transition time moves only when its status changes.
func TestMergeConditionsKeepsTransitionTime(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	now := metav1.NewTime(t0.Add(time.Hour))
	old := []metav1.Condition{
		{Type: "A", Status: metav1.ConditionTrue, Reason: "X", LastTransitionTime: t0},
		{Type: "B", Status: metav1.ConditionFalse, Reason: "Y", LastTransitionTime: t0},
	}
	got := mergeConditions(old, []metav1.Condition{
		{Type: "B", Status: metav1.ConditionTrue, Reason: "Y"},
		{Type: "A", Status: metav1.ConditionTrue, Reason: "Z", Message: "reason changed, status did not"},
		{Type: "C", Status: metav1.ConditionUnknown, Reason: "W"},
	}, now)
	want := map[string]metav1.Time{"A": t0, "B": now, "C": now}
	for i, typ := range []string{"B", "A", "C"} {
		w := want[typ]
		if got[i].Type != typ || !got[i].LastTransitionTime.Equal(&w) {
			t.Errorf("condition %d = %s at %v, want %s at %v", i, got[i].Type, got[i].LastTransitionTime, typ, want[typ])
		}
	}
}
