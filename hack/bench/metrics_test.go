package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/surveyor-dev/surveyor/internal/harness"
)

func TestCountRequests(t *testing.T) {
	parse := func(s string) harness.Metrics {
		m, err := harness.ParseMetrics(strings.NewReader(s), "apiserver_flowcontrol_dispatched_requests_total")
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
