package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

// series is one sample of a Prometheus metric: its labels and value.
type series struct {
	labels map[string]string
	value  float64
}

// metrics holds the samples of the families a scrape kept, by metric name.
type metrics map[string][]series

// parseMetrics reads the Prometheus text format and keeps only the named metrics.
// kube-apiserver's /metrics runs to megabytes of histograms the benchmark never
// reads, so filtering while scanning keeps each scrape cheap for the harness, which
// shares the machine's two cores with the controller it measures.
func parseMetrics(r io.Reader, names ...string) (metrics, error) {
	keep := map[string]bool{}
	for _, n := range names {
		keep[n] = true
	}
	out := metrics{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		end := strings.IndexAny(line, "{ ")
		if end < 0 || !keep[line[:end]] {
			continue
		}
		name, rest := line[:end], line[end:]
		labels := map[string]string{}
		if rest[0] == '{' {
			var err error
			if labels, rest, err = parseLabels(rest[1:]); err != nil {
				return nil, fmt.Errorf("metric %s: %w", name, err)
			}
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			return nil, fmt.Errorf("metric %s has no value", name)
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			return nil, fmt.Errorf("metric %s: %w", name, err)
		}
		out[name] = append(out[name], series{labels: labels, value: v})
	}
	return out, sc.Err()
}

// parseLabels parses `k="v",k2="v2"}` (the opening brace already consumed) and
// returns the labels and what follows the closing brace.
func parseLabels(s string) (map[string]string, string, error) {
	labels := map[string]string{}
	for {
		s = strings.TrimLeft(s, ", ")
		if strings.HasPrefix(s, "}") {
			return labels, s[1:], nil
		}
		eq := strings.Index(s, "=\"")
		if eq < 0 {
			return nil, "", errors.New("malformed labels")
		}
		key := s[:eq]
		s = s[eq+2:]
		var b strings.Builder
		i := 0
		for ; i < len(s) && s[i] != '"'; i++ {
			if s[i] == '\\' && i+1 < len(s) {
				i++
				switch s[i] {
				case 'n':
					b.WriteByte('\n')
				default:
					b.WriteByte(s[i])
				}
				continue
			}
			b.WriteByte(s[i])
		}
		if i == len(s) {
			return nil, "", errors.New("unterminated label value")
		}
		labels[key] = b.String()
		s = s[i+1:]
	}
}

// sum adds the samples of name whose labels include every pair in match.
func (m metrics) sum(name string, match map[string]string) float64 {
	var total float64
	for _, s := range m[name] {
		if matches(s.labels, match) {
			total += s.value
		}
	}
	return total
}

func matches(labels, match map[string]string) bool {
	for k, v := range match {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// by sums the samples of name grouped by the values of keys, joined with " ".
func (m metrics) by(name string, match map[string]string, keys ...string) map[string]float64 {
	out := map[string]float64{}
	for _, s := range m[name] {
		if !matches(s.labels, match) {
			continue
		}
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = s.labels[k]
		}
		out[strings.Join(parts, " ")] += s.value
	}
	return out
}

// deltaBy is after.by(...) minus before.by(...), dropping keys that did not move.
func deltaBy(before, after metrics, name string, match map[string]string, keys ...string) map[string]float64 {
	b, a := before.by(name, match, keys...), after.by(name, match, keys...)
	out := map[string]float64{}
	for k, v := range a {
		if d := v - b[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

// scrapeURL fetches and parses a /metrics endpoint with the given HTTP client.
func scrapeURL(ctx context.Context, hc *http.Client, url string, names ...string) (metrics, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return parseMetrics(resp.Body, names...)
}

// procStat is what /proc says about a process.
type procStat struct {
	// CPU is user plus system time.
	CPU time.Duration
	// RSS is the resident set (VmRSS); HWM its peak over the process's life (VmHWM).
	RSS, HWM uint64
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

// userHZ is the unit of /proc/<pid>/stat times. It is 100 on every Linux
// architecture Go supports (the kernel's USER_HZ, not its tick rate).
const userHZ = 100

// readProc reads the CPU time and memory of a running process.
func readProc(pid int) (procStat, error) {
	var st procStat
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return st, err
	}
	// The command name (field 2) may hold spaces; the fields after its closing
	// parenthesis start at field 3, so utime (14) and stime (15) are at 11 and 12.
	i := strings.LastIndexByte(string(stat), ')')
	fields := strings.Fields(string(stat[i+1:]))
	if len(fields) < 13 {
		return st, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	var ticks uint64
	for _, f := range fields[11:13] {
		t, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return st, err
		}
		ticks += t
	}
	st.CPU = time.Duration(ticks) * time.Second / userHZ
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return st, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		var dst *uint64
		switch key {
		case "VmRSS":
			dst = &st.RSS
		case "VmHWM":
			dst = &st.HWM
		default:
			continue
		}
		kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(val), " kB"), 10, 64)
		if err != nil {
			return st, fmt.Errorf("/proc/%d/status %s: %w", pid, key, err)
		}
		*dst = kb * 1024
	}
	return st, nil
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
