package main

import (
	"os"
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
apiserver_request_duration_seconds_bucket{le="0.1"} 9
go_goroutines 42
`
	tests := []struct {
		name  string
		keep  []string
		check func(t *testing.T, m metrics)
	}{
		{
			name: "keeps only the named families",
			keep: []string{"apiserver_request_total"},
			check: func(t *testing.T, m metrics) {
				if len(m) != 1 || len(m["apiserver_request_total"]) != 2 {
					t.Fatalf("got %v", m)
				}
			},
		},
		{
			name: "sums by labels",
			keep: []string{"apiserver_request_total"},
			check: func(t *testing.T, m metrics) {
				got := m.by("apiserver_request_total", nil, "verb", "resource")
				want := map[string]float64{"APPLY configmaps": 200, "PATCH workloads": 101}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Fatal(diff)
				}
				if v := m.sum("apiserver_request_total", map[string]string{"subresource": "status"}); v != 101 {
					t.Fatalf("sum = %v", v)
				}
			},
		},
		{
			name: "unescapes label values and reads exponents",
			keep: []string{"apiserver_flowcontrol_dispatched_requests_total"},
			check: func(t *testing.T, m metrics) {
				if v := m.sum("apiserver_flowcontrol_dispatched_requests_total", map[string]string{"flow_schema": `odd "quoted" name`}); v != 1500 {
					t.Fatalf("sum = %v", v)
				}
			},
		},
		{
			name: "reads unlabelled samples",
			keep: []string{"go_goroutines"},
			check: func(t *testing.T, m metrics) {
				if v := m.sum("go_goroutines", nil); v != 42 {
					t.Fatalf("sum = %v", v)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := parseMetrics(strings.NewReader(text), tt.keep...)
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, m)
		})
	}
}

func TestCountRequests(t *testing.T) {
	parse := func(s string) metrics {
		m, err := parseMetrics(strings.NewReader(s), "apiserver_flowcontrol_dispatched_requests_total")
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	before := parse(`apiserver_flowcontrol_dispatched_requests_total{flow_schema="bench-controller-patch",priority_level="workload-low"} 5
apiserver_flowcontrol_dispatched_requests_total{flow_schema="bench-controller-lease",priority_level="workload-low"} 10
`)
	after := parse(`apiserver_flowcontrol_dispatched_requests_total{flow_schema="bench-controller-patch",priority_level="workload-low"} 8
apiserver_flowcontrol_dispatched_requests_total{flow_schema="bench-controller-lease",priority_level="workload-low"} 12
apiserver_flowcontrol_dispatched_requests_total{flow_schema="bench-stamper-patch",priority_level="workload-low"} 30
apiserver_flowcontrol_dispatched_requests_total{flow_schema="bench-stamper-discovery",priority_level="workload-low"} 1
apiserver_flowcontrol_dispatched_requests_total{flow_schema="service-accounts",priority_level="workload-low"} 99
`)
	got := countRequests(before, after)
	want := requestCounts{
		"controller": {"patch": 3, "lease": 2},
		"stamper":    {"patch": 30, "discovery": 1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatal(diff)
	}
	if v := got.all(true); v != 36 {
		t.Errorf("all(true) = %v", v)
	}
	if v := got.all(false); v != 34 {
		t.Errorf("all(false) = %v", v)
	}
	if v := got.allWrites(); v != 33 {
		t.Errorf("allWrites = %v", v)
	}
}

func TestPercentile(t *testing.T) {
	tests := []struct {
		name string
		vs   []float64
		p    float64
		want float64
	}{
		{"none", nil, 50, 0},
		{"one", []float64{7}, 99, 7},
		{"median of odd", []float64{3, 1, 2}, 50, 2},
		{"p99 of 100 is the 99th", seq(100), 99, 99},
		{"p99 of 50 is the largest", seq(50), 99, 50},
		{"p100 is the largest", seq(10), 100, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := percentile(tt.vs, tt.p); got != tt.want {
				t.Errorf("percentile(%v) = %v, want %v", tt.p, got, tt.want)
			}
		})
	}
	if got := median([]float64{4, 1, 3, 2}); got != 2.5 {
		t.Errorf("median = %v, want 2.5", got)
	}
}

func seq(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = float64(n - i) // descending, so sorting is exercised
	}
	return out
}

func TestReadProc(t *testing.T) {
	st, err := readProc(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if st.RSS == 0 || st.HWM < st.RSS {
		t.Errorf("RSS %d, HWM %d: want 0 < RSS <= HWM", st.RSS, st.HWM)
	}
}

func TestReadMachine(t *testing.T) {
	a, err := readMachine()
	if err != nil {
		t.Fatal(err)
	}
	if a.total == 0 || a.busy > a.total {
		t.Errorf("busy %d of %d ticks", a.busy, a.total)
	}
	if got := busyShare(a, a); got != 0 {
		t.Errorf("busyShare of one reading = %v, want 0", got)
	}
}
