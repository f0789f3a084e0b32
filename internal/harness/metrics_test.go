package harness

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseMetrics(t *testing.T) {
	text := `# HELP apiserver_request_total Counter of apiserver requests
# TYPE apiserver_request_total counter
apiserver_request_total{code="201",resource="configmaps",subresource="",verb="APPLY"} 200
apiserver_request_total{code="200",resource="workloads",subresource="status",verb="PATCH"} 101
apiserver_flowcontrol_dispatched_requests_total{flow_schema="bench-controller-patch",priority_level="workload-low"} 7
apiserver_flowcontrol_dispatched_requests_total{flow_schema="odd \"quoted\" name",priority_level="exempt"} 1.5e+03
# HELP apiserver_request_duration_seconds Response latency
# TYPE apiserver_request_duration_seconds histogram
apiserver_request_duration_seconds_bucket{le="0.1"} 9
apiserver_request_duration_seconds_bucket{le="+Inf"} 10
apiserver_request_duration_seconds_sum 0.5
apiserver_request_duration_seconds_count 10
# TYPE workqueue_depth gauge
workqueue_depth{name="workload"} 3
workqueue_depth{name="blueprint"} 1
go_goroutines 42
`
	tests := []struct {
		name  string
		keep  []string
		check func(t *testing.T, m Metrics)
	}{
		{
			name: "keeps only the named families",
			keep: []string{"apiserver_request_total"},
			check: func(t *testing.T, m Metrics) {
				if len(m) != 1 || len(m["apiserver_request_total"].GetMetric()) != 2 {
					t.Fatalf("got %v", m)
				}
			},
		},
		{
			name: "keeps every family when none is named",
			check: func(t *testing.T, m Metrics) {
				if len(m) != 5 {
					t.Fatalf("got %d families: %v", len(m), m)
				}
			},
		},
		{
			name: "keeps a histogram's samples by its family name",
			keep: []string{"apiserver_request_duration_seconds"},
			check: func(t *testing.T, m Metrics) {
				h := m["apiserver_request_duration_seconds"].GetMetric()
				if len(m) != 1 || len(h) != 1 || h[0].GetHistogram().GetSampleCount() != 10 {
					t.Fatalf("got %v", m)
				}
			},
		},
		{
			name: "sums by labels",
			keep: []string{"apiserver_request_total"},
			check: func(t *testing.T, m Metrics) {
				got := m.By("apiserver_request_total", nil, "verb", "resource")
				want := map[string]float64{"APPLY configmaps": 200, "PATCH workloads": 101}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Fatal(diff)
				}
				if v := m.Sum("apiserver_request_total", map[string]string{"subresource": "status"}); v != 101 {
					t.Fatalf("sum = %v", v)
				}
			},
		},
		{
			name: "sums gauges",
			keep: []string{"workqueue_depth"},
			check: func(t *testing.T, m Metrics) {
				if v := m.Sum("workqueue_depth", map[string]string{"name": "workload"}); v != 3 {
					t.Fatalf("sum = %v", v)
				}
				if v := m.Sum("workqueue_depth", nil); v != 4 {
					t.Fatalf("sum of all = %v", v)
				}
			},
		},
		{
			name: "unescapes label values and reads exponents",
			keep: []string{"apiserver_flowcontrol_dispatched_requests_total"},
			check: func(t *testing.T, m Metrics) {
				if v := m.Sum("apiserver_flowcontrol_dispatched_requests_total", map[string]string{"flow_schema": `odd "quoted" name`}); v != 1500 {
					t.Fatalf("sum = %v", v)
				}
			},
		},
		{
			name: "reads untyped samples",
			keep: []string{"go_goroutines"},
			check: func(t *testing.T, m Metrics) {
				if v := m.Sum("go_goroutines", nil); v != 42 {
					t.Fatalf("sum = %v", v)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := ParseMetrics(strings.NewReader(text), tt.keep...)
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, m)
		})
	}
}
