package realizer

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/render"
)

// What cli-utils' kstatus (kpt, Config Sync, ...) makes of an owner in each state, without
// and with --kstatus-conditions: without, a Workload that will never converge is
// InProgress until the waiter's timeout; with, it is Failed at once, and the rest is as
// before.
func TestKStatusOfOwners(t *testing.T) {
	const gen = 2
	now := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	scReady := cond(v1alpha1.ConditionSupplyChainReady, metav1.ConditionTrue, v1alpha1.ReasonReady, "")
	resource := func(submitted, healthy metav1.Condition) *render.Result {
		return &render.Result{Status: v1alpha1.ResourceStatus{Name: "app", ObservedGeneration: gen}, Submitted: submitted, Healthy: healthy}
	}
	submitted := cond(v1alpha1.ConditionResourceSubmitted, metav1.ConditionTrue, v1alpha1.ReasonResourceSubmissionComplete, "")
	noObject := cond(v1alpha1.ConditionHealthy, metav1.ConditionUnknown, v1alpha1.ReasonNoStampedObject, "no object has been stamped yet")
	tests := []struct {
		name          string
		obs           observation
		without, with status.Status
		condition     string // the kstatus condition added, "" for none
	}{
		{"ready", observation{blueprint: scReady, resources: []*render.Result{resource(submitted, cond(v1alpha1.ConditionHealthy, metav1.ConditionTrue, v1alpha1.ReasonAlwaysHealthy, ""))}},
			status.CurrentStatus, status.CurrentStatus, ""},
		{"converging", observation{blueprint: scReady, resources: []*render.Result{resource(submitted, cond(v1alpha1.ConditionHealthy, metav1.ConditionUnknown, v1alpha1.ReasonNoMatchesFulfilled, "waiting"))}},
			status.InProgressStatus, status.InProgressStatus, v1alpha1.ConditionReconciling},
		{"unhealthy (may recover)", observation{blueprint: scReady, resources: []*render.Result{resource(submitted, cond(v1alpha1.ConditionHealthy, metav1.ConditionFalse, v1alpha1.ReasonMatchedCondition, "crashing"))}},
			status.InProgressStatus, status.InProgressStatus, v1alpha1.ConditionReconciling},
		{"a template the API server rejects", observation{blueprint: scReady, resources: []*render.Result{resource(cond(v1alpha1.ConditionResourceSubmitted, metav1.ConditionFalse, v1alpha1.ReasonTemplateRejectedByAPIServer, "invalid"), noObject)}},
			status.InProgressStatus, status.FailedStatus, v1alpha1.ConditionStalled},
		{"a template that cannot be stamped", observation{blueprint: scReady, resources: []*render.Result{resource(cond(v1alpha1.ConditionResourceSubmitted, metav1.ConditionFalse, v1alpha1.ReasonTemplateStampFailure, "missing path"), noObject)}},
			status.InProgressStatus, status.FailedStatus, v1alpha1.ConditionStalled},
		{"no supply chain", observation{blueprint: cond(v1alpha1.ConditionSupplyChainReady, metav1.ConditionFalse, v1alpha1.ReasonSupplyChainNotFound, "none"), keepResources: true},
			status.InProgressStatus, status.FailedStatus, v1alpha1.ConditionStalled},
		{"an invalid rule", observation{blueprint: scReady, resources: []*render.Result{resource(submitted, cond(v1alpha1.ConditionHealthy, metav1.ConditionUnknown, v1alpha1.ReasonInvalidHealthRule, "invalid jsonpath"))}},
			status.InProgressStatus, status.FailedStatus, v1alpha1.ConditionStalled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, kstatus := range []bool{false, true} {
				st := ownerStatus(v1alpha1.Workloads, &v1alpha1.OwnerStatus{}, &tt.obs, gen, now, kstatus)
				want := tt.without
				if kstatus {
					want = tt.with
				}
				if got := compute(t, st); got != want {
					t.Errorf("kstatus-conditions=%t: kstatus says %s, want %s; conditions %v", kstatus, got, want, st.Conditions)
				}
				var extra []string
				for _, c := range st.Conditions {
					if c.Type == v1alpha1.ConditionStalled || c.Type == v1alpha1.ConditionReconciling {
						extra = append(extra, c.Type)
					}
				}
				switch {
				case !kstatus && len(extra) > 0:
					t.Errorf("without the flag the owner has %v", extra)
				case kstatus && tt.condition == "" && len(extra) > 0:
					t.Errorf("the owner has %v, want neither", extra)
				case kstatus && tt.condition != "" && (len(extra) != 1 || extra[0] != tt.condition || st.Conditions[len(st.Conditions)-1].Type != tt.condition):
					t.Errorf("the owner has %v, want %s alone and last", extra, tt.condition)
				}
			}
		})
	}

	// A Stalled owner that is fixed loses Stalled (abnormal-true: never False).
	stalled := ownerStatus(v1alpha1.Workloads, &v1alpha1.OwnerStatus{}, &tests[3].obs, gen, now, true)
	fixed := ownerStatus(v1alpha1.Workloads, &stalled, &tests[0].obs, gen, now, true)
	for _, c := range fixed.Conditions {
		if c.Type == v1alpha1.ConditionStalled || c.Type == v1alpha1.ConditionReconciling {
			t.Errorf("the fixed owner still has %s=%s", c.Type, c.Status)
		}
	}
}

// compute is kstatus's verdict on a Workload at generation 2 with st.
func compute(t *testing.T, st v1alpha1.OwnerStatus) status.Status {
	t.Helper()
	w := &v1alpha1.Workload{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "dev", Generation: 2}}
	w.Status.OwnerStatus = st
	w.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind("Workload"))
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(w)
	if err != nil {
		t.Fatal(err)
	}
	res, err := status.Compute(&unstructured.Unstructured{Object: obj})
	if err != nil {
		t.Fatal(err)
	}
	return res.Status
}
