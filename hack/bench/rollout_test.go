package main

import (
	"testing"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

func TestEarlyWrites(t *testing.T) {
	const old, target = "bench-old", "bench-new"
	marks := map[string][]rolloutMark{
		// Admitted, then restamped and Succeeded: nothing early.
		"w-00000": {{target, v1alpha1.RolloutProgressing}, {target, v1alpha1.RolloutProgressing}, {target, v1alpha1.RolloutSucceeded}},
		// A ToApply record at the target before its admission: one early write.
		"w-00001": {{target, v1alpha1.RolloutToApply}, {target, v1alpha1.RolloutProgressing}},
		// A health change while it still ran the old revision, and one without any record.
		"w-00002": {{old, v1alpha1.RolloutSucceeded}, {}, {target, v1alpha1.RolloutProgressing}},
		// No status change at all.
		"w-00003": nil,
	}
	writes, workloads, all := earlyWrites(marks, target)
	if writes != 3 || workloads != 2 || all != 8 {
		t.Errorf("earlyWrites = %d writes to %d Workloads of %d changes, want 3 to 2 of 8", writes, workloads, all)
	}
	if w, n, a := earlyWrites(nil, target); w != 0 || n != 0 || a != 0 {
		t.Errorf("earlyWrites(nil) = %d, %d, %d, want zeros", w, n, a)
	}
}

func TestGroupOf(t *testing.T) {
	for _, tt := range []struct {
		i, groups int
		want      string
	}{{0, 10, "g0"}, {9, 10, "g9"}, {10, 10, "g0"}, {12345, 10, "g5"}, {3, 1, "g0"}, {3, 0, ""}} {
		if got := groupOf(tt.i, tt.groups); got != tt.want {
			t.Errorf("groupOf(%d, %d) = %q, want %q", tt.i, tt.groups, got, tt.want)
		}
	}
}
