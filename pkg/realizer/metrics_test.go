package realizer

import (
	"context"
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// listed is a cache reader holding a list of Workloads, as the informer's cache hands them
// out without copying; other kinds are empty.
type listed struct {
	client.Reader
	workloads []v1alpha1.Workload
}

func (l listed) List(_ context.Context, list client.ObjectList, _ ...client.ListOption) error {
	if w, ok := list.(*v1alpha1.WorkloadList); ok {
		w.Items = l.workloads
	}
	return nil
}

func workloadsIn(n int) listed {
	reasons := []string{v1alpha1.ReasonReady, v1alpha1.ReasonTemplateStampFailure, v1alpha1.ReasonHealthyConditionRule}
	l := listed{workloads: make([]v1alpha1.Workload, n)}
	for i := range l.workloads {
		status := metav1.ConditionTrue
		if i%3 != 0 {
			status = metav1.ConditionFalse
		}
		l.workloads[i].Status.Conditions = []metav1.Condition{
			{Type: v1alpha1.ConditionSupplyChainReady, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonReady},
			{Type: v1alpha1.ConditionReady, Status: status, Reason: reasons[i%3]},
		}
	}
	l.workloads[0].Status.Conditions = nil // not yet reconciled
	return l
}

// The collector counts owners by Ready's status and reason.
func TestStatusCollectorCountsOwners(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(newStatusCollector(workloadsIn(9)))
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			key := f.GetName()
			for _, l := range m.GetLabel() {
				key += fmt.Sprintf(" %s=%s", l.GetName(), l.GetValue())
			}
			got[key] = m.GetGauge().GetValue()
		}
	}
	want := map[string]float64{
		"surveyor_owners kind=Workload ready=Unknown reason=":                   1,
		"surveyor_owners kind=Workload ready=True reason=Ready":                 2,
		"surveyor_owners kind=Workload ready=False reason=TemplateStampFailure": 3,
		"surveyor_owners kind=Workload ready=False reason=HealthyConditionRule": 3,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("metrics = %v, want %v", got, want)
	}
}

// BenchmarkStatusCollector is one scrape of the collector over 10,000 Workloads.
func BenchmarkStatusCollector(b *testing.B) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(newStatusCollector(workloadsIn(10_000)))
	b.ReportAllocs()
	for range b.N {
		if _, err := reg.Gather(); err != nil {
			b.Fatal(err)
		}
	}
}
