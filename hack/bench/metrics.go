package main

import (
	"errors"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/surveyor-dev/surveyor/internal/harness"
)

// deltaBy is after.By(...) minus before.By(...), dropping keys that did not move.
func deltaBy(before, after harness.Metrics, name string, match map[string]string, keys ...string) map[string]float64 {
	b, a := before.By(name, match, keys...), after.By(name, match, keys...)
	out := map[string]float64{}
	for k, v := range a {
		if d := v - b[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

// controlPlane are the cluster's processes whose CPU the bench reports: the API server
// serves every request, etcd stores every write, and kube-controller-manager reacts to
// the stamped objects (its garbage collector, and Services' endpoint controllers).
var controlPlane = []string{"kube-apiserver", "etcd", "kube-controller-manager"}

// cpuDelta is the CPU each component spent between two readings, in seconds.
func cpuDelta(before, after map[string]time.Duration) map[string]float64 {
	out := map[string]float64{}
	for name, cpu := range after {
		out[name] = (cpu - before[name]).Seconds()
	}
	return out
}

// sortedKeys returns m's keys ordered by value, largest first, then by key.
func sortedKeys(m map[string]float64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	return keys
}

const mib = 1 << 20

// machineStat is the whole machine's CPU time from /proc/stat, in clock ticks.
type machineStat struct {
	busy, total uint64
	// load1 is the one-minute load average.
	load1 float64
}

// readMachine reads the machine's CPU counters and load average. The machine is
// shared, so the benchmark records how busy it was to tell a slow run from a noisy one.
func readMachine() (machineStat, error) {
	var m machineStat
	stat, err := os.ReadFile("/proc/stat")
	if err != nil {
		return m, err
	}
	line, _, _ := strings.Cut(string(stat), "\n")
	fields := strings.Fields(line)
	if len(fields) < 6 || fields[0] != "cpu" {
		return m, errors.New("/proc/stat: no cpu line")
	}
	for i, f := range fields[1:] {
		v, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return m, err
		}
		// guest and guest_nice (9th and 10th) are already counted in user and nice.
		if i >= 8 {
			break
		}
		m.total += v
		if i != 3 && i != 4 { // idle, iowait
			m.busy += v
		}
	}
	load, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return m, err
	}
	if f := strings.Fields(string(load)); len(f) > 0 {
		m.load1, _ = strconv.ParseFloat(f[0], 64)
	}
	return m, nil
}

// busyShare is the fraction of the machine's CPU time that was busy between a and b.
func busyShare(a, b machineStat) float64 {
	if b.total <= a.total {
		return 0
	}
	return float64(b.busy-a.busy) / float64(b.total-a.total)
}
