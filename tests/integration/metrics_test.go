package integration

import (
	"fmt"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// The controller's metrics say how many owners are in each Ready state, read from its cache
// at each scrape (docs/operating.md, "Dashboards"): a Workload without labels shows up as
// ready="False", reason="WorkloadLabelsMissing", and the CEL and ytt families are served.
func TestMetricsCountOwnersByReadiness(t *testing.T) {
	ns := newNamespace(t)
	for i := range 3 {
		env.CreateAll(ctx, t, &v1alpha1.Workload{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("unlabelled-%d", i), Namespace: ns}})
	}
	want := map[string]string{"kind": "Workload", "ready": "False", "reason": v1alpha1.ReasonWorkloadLabelsMissing}
	eventually(t, time.Minute, func() (bool, string) {
		families, err := metrics.Registry.Gather()
		if err != nil {
			return false, err.Error()
		}
		byName := map[string]*dto.MetricFamily{}
		for _, f := range families {
			byName[f.GetName()] = f
		}
		for _, name := range []string{"surveyor_owners", "surveyor_cel_evaluations_total", "surveyor_cel_cost_total", "surveyor_cel_evaluations_stopped_total"} {
			if byName[name] == nil {
				return false, "no family " + name
			}
		}
		for _, m := range byName["surveyor_owners"].GetMetric() {
			if labelsAre(m, want) && m.GetGauge().GetValue() >= 3 {
				return true, ""
			}
		}
		return false, fmt.Sprintf("no surveyor_owners%v of 3 or more among %v", want, byName["surveyor_owners"].GetMetric())
	})
}

func labelsAre(m *dto.Metric, want map[string]string) bool {
	for _, l := range m.GetLabel() {
		if v, ok := want[l.GetName()]; ok && v != l.GetValue() {
			return false
		}
	}
	return len(m.GetLabel()) == len(want)
}
