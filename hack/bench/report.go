package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
)

// runResult is everything one run measured; phases that were skipped are nil.
type runResult struct {
	N           int                `json:"n"`
	ClusterDir  string             `json:"clusterDir,omitempty"`
	Floor       *floorResult       `json:"floor,omitempty"`
	Convergence *convergenceResult `json:"convergence"`
	Settle      *settleResult      `json:"settle,omitempty"`
	Rest        *restResult        `json:"rest,omitempty"`
	Restart     *restartResult     `json:"restart,omitempty"`
	Propagation *propagationResult `json:"propagation,omitempty"`
	Rollout     *rolloutResult     `json:"rollout,omitempty"`
	Isolation   *isolationResult   `json:"isolation,omitempty"`
	Profile     *profileResult     `json:"profile,omitempty"`
}

// figure is one reported number and, where the issue sets one, its target.
type figure struct {
	Key    string    `json:"key"`
	Label  string    `json:"label"`
	Unit   string    `json:"unit"`
	Values []float64 `json:"values"`
	Median float64   `json:"median"`
	Target string    `json:"target,omitempty"`
	// Met is set when the target applies at this N; it judges the median.
	Met *bool `json:"met,omitempty"`
}

// figureDef says how to read a figure from a run and how to judge it.
type figureDef struct {
	key, label, unit, target string
	value                    func(r *runResult) (float64, bool)
	met                      func(v float64) bool
	// atN limits the target to one N (the issue sets several for N=1000 only).
	atN int
}

var figureDefs = slices.Concat([]figureDef{
	{key: "convergence", label: "Convergence: first create → all Ready", unit: "s",
		value: func(r *runResult) (float64, bool) { return r.Convergence.Seconds, true }},
	{key: "floor", label: "Floor: plain client, same writes and workers, no client-side limit", unit: "s",
		value: func(r *runResult) (float64, bool) {
			if r.Floor == nil {
				return 0, false
			}
			return r.Floor.Seconds, true
		}},
	{key: "floorCPU", label: "Floor client CPU: the same writes with no watch or reconcile", unit: "s",
		value: func(r *runResult) (float64, bool) {
			if r.Floor == nil {
				return 0, false
			}
			return r.Floor.CPUSeconds, true
		}},
	{key: "planeCPU", label: "Control-plane CPU per Workload, converging (API server, etcd, controller-manager)", unit: "ms",
		value: func(r *runResult) (float64, bool) {
			return sumValues(r.Convergence.ControlPlaneCPUSeconds) * 1000 / float64(r.N), true
		}},
	{key: "floorPlaneCPU", label: "  the same for the floor", unit: "ms",
		value: func(r *runResult) (float64, bool) {
			if r.Floor == nil {
				return 0, false
			}
			return sumValues(r.Floor.ControlPlaneCPUSeconds) * 1000 / float64(r.N), true
		}},
	{key: "ratio", label: "Convergence / floor", unit: "×", target: "≤ 1.5× at N=1000", atN: 1000,
		value: func(r *runResult) (float64, bool) { return r.Convergence.RatioToFloor, r.Floor != nil },
		met:   func(v float64) bool { return v <= 1.5 }},
	{key: "machineBusy", label: "Machine CPU busy while converging (all processes)", unit: "%",
		value: func(r *runResult) (float64, bool) { return 100 * r.Convergence.MachineBusy, true }},
	{key: "perWorkload", label: "Time per Workload", unit: "ms",
		value: func(r *runResult) (float64, bool) { return r.Convergence.PerWorkloadMs, true }},
	{key: "readyP50", label: "Half the Workloads Ready", unit: "s",
		value: func(r *runResult) (float64, bool) { return r.Convergence.ReadyP50Seconds, true }},
	{key: "requestsPerWorkload", label: "API requests per Workload, converging (all verbs, discovery incl.)", unit: "", target: "≤ 6",
		value: func(r *runResult) (float64, bool) { return r.Convergence.RequestsPerWorkload, true },
		met:   func(v float64) bool { return v <= 6 }},
	{key: "requestsPerWorkloadUntilQuiet", label: "  including the tail after the last Ready (events)", unit: "", target: "≤ 6",
		value: func(r *runResult) (float64, bool) {
			if r.Settle == nil {
				return 0, false
			}
			return r.Convergence.RequestsPerWorkload + r.Settle.Requests.all(false)/float64(r.N), true
		},
		met: func(v float64) bool { return v <= 6 }},
	{key: "writesPerWorkload", label: "  writes per Workload, converging", unit: "",
		value: func(r *runResult) (float64, bool) { return r.Convergence.WritesPerWorkload, true }},
	{key: "reconcilesPerWorkload", label: "Reconciles per Workload, converging", unit: "",
		value: func(r *runResult) (float64, bool) { return r.Convergence.ReconcilesPerWorkload, true }},
	{key: "workloadKB", label: "A converged Workload as JSON (every status write and watch event)", unit: "KB",
		value: func(r *runResult) (float64, bool) { return r.Convergence.WorkloadKB, r.Convergence.WorkloadKB > 0 }},
	{key: "managedFieldsKB", label: "  of it managedFields", unit: "KB",
		value: func(r *runResult) (float64, bool) { return r.Convergence.ManagedFieldsKB, r.Convergence.WorkloadKB > 0 }},
	{key: "cpu", label: "Controller CPU to converge", unit: "s", target: "≤ 3 s at N=1000", atN: 1000,
		value: func(r *runResult) (float64, bool) { return r.Convergence.ControllerCPUSeconds, true },
		met:   func(v float64) bool { return v <= 3 }},
	{key: "peakRSS", label: "Controller peak RSS (VmHWM)", unit: "MiB", target: "< 80 MiB at N=1000", atN: 1000,
		value: func(r *runResult) (float64, bool) { return r.Convergence.PeakRSSMiB, true },
		met:   func(v float64) bool { return v < 80 }},
	{key: "rssPerWorkload", label: "  peak RSS per Workload", unit: "KiB", target: "≤ 40 KiB at N=10000", atN: 10000,
		value: func(r *runResult) (float64, bool) { return r.Convergence.PeakRSSMiB * 1024 / float64(r.N), true },
		met:   func(v float64) bool { return v <= 40 }},
	{key: "workerCPU", label: "ytt workers' CPU to converge (bench -ytt)", unit: "s",
		value: func(r *runResult) (float64, bool) {
			return r.Convergence.WorkerCPUSeconds, r.Convergence.WorkerPeakRSSMiB > 0
		}},
	{key: "workerPeakRSS", label: "ytt workers' peak RSS, added up", unit: "MiB",
		value: func(r *runResult) (float64, bool) {
			return r.Convergence.WorkerPeakRSSMiB, r.Convergence.WorkerPeakRSSMiB > 0
		}},
	{key: "eventsPerWorkload", label: "Events per Workload, converging (all reasons)", unit: "", target: "≤ 1",
		value: func(r *runResult) (float64, bool) {
			if r.Settle == nil {
				return 0, false
			}
			return sumValues(r.Settle.Events) / float64(r.N), true
		},
		met: func(v float64) bool { return v <= 1 }},
	{key: "eventsFailed", label: "  events the controller failed to record (surveyor_events_failed_total)", unit: "", target: "0",
		value: func(r *runResult) (float64, bool) {
			if r.Settle == nil {
				return 0, false
			}
			return r.Settle.EventsFailed, true
		},
		met: func(v float64) bool { return v == 0 }},
	{key: "settle", label: "Controller still busy after last Ready", unit: "s",
		value: func(r *runResult) (float64, bool) {
			if r.Settle == nil {
				return 0, false
			}
			return r.Settle.Seconds, true
		}},
	{key: "restWrites", label: "At rest: writes in the window (leader election aside)", unit: "", target: "0",
		value: func(r *runResult) (float64, bool) {
			if r.Rest == nil {
				return 0, false
			}
			return r.Rest.Writes, true
		},
		met: func(v float64) bool { return v == 0 }},
	{key: "restRPS", label: "At rest: requests/s (leader election aside)", unit: "/s", target: "< 0.5",
		value: func(r *runResult) (float64, bool) {
			if r.Rest == nil {
				return 0, false
			}
			return r.Rest.RequestsPerSecond, true
		},
		met: func(v float64) bool { return v < 0.5 }},
	{key: "restRPSWithLease", label: "At rest: requests/s with leader election", unit: "/s",
		value: func(r *runResult) (float64, bool) {
			if r.Rest == nil {
				return 0, false
			}
			return r.Rest.RequestsPerSecondWithLease, true
		}},
}, restartFigures(), []figureDef{
	{key: "propagationP50", label: "Propagation: stamped object → owner ResourcesHealthy, p50", unit: "ms",
		value: func(r *runResult) (float64, bool) {
			if r.Propagation == nil {
				return 0, false
			}
			return r.Propagation.P50Ms, true
		}},
	{key: "propagationP99", label: "Propagation p99", unit: "ms", target: "< 100 ms",
		value: func(r *runResult) (float64, bool) {
			if r.Propagation == nil {
				return 0, false
			}
			return r.Propagation.P99Ms, true
		},
		met: func(v float64) bool { return v < 100 }},
}, rolloutFigures("rolloutGroup", "Rollout (ProgressivePerGroup, minSuccessTime 0s)", "(admission, restamp, Succeeded)", 3,
	func(r *rolloutResult) *rolloutChange { return r.PerGroup }),
	// The supply chain writes every record (issue 36): All admits as every strategy does.
	rolloutFigures("rollout", "Rollout (type All)", "(admission, restamp, Succeeded)", 3, func(r *rolloutResult) *rolloutChange { return r.All }),
	[]figureDef{
		{key: "isolationRSS", label: "RSS change with unrelated ConfigMaps", unit: "MiB", target: "< 10 MiB",
			value: func(r *runResult) (float64, bool) {
				if r.Isolation == nil {
					return 0, false
				}
				return r.Isolation.RSSDeltaMiB, true
			},
			met: func(v float64) bool { return v < 10 }},
		{key: "isolationHeap", label: "  heap in use, change", unit: "MiB",
			value: func(r *runResult) (float64, bool) {
				if r.Isolation == nil {
					return 0, false
				}
				return r.Isolation.HeapAfterMiB - r.Isolation.HeapBeforeMiB, true
			}},
	})

// rolloutFigures are the figures of the rollout phase's change that pick chooses (nil when
// skipped), under keys that start with prefix, with a target of writes status writes per
// Workload.
func rolloutFigures(prefix, title, writesWhy string, writes float64, pick func(*rolloutResult) *rolloutChange) []figureDef {
	return []figureDef{
		{key: prefix + "Seconds", label: title + ": template change → complete", unit: "s",
			value: rolloutValue(pick, func(c *rolloutChange) float64 { return c.Seconds })},
		{key: prefix + "Applies", label: "  applies per changed stamped object", target: "≤ 1",
			value: rolloutValue(pick, func(c *rolloutChange) float64 { return c.AppliesPerChangedObject }),
			met:   func(v float64) bool { return v <= 1 }},
		{key: prefix + "StatusWrites", label: strings.TrimRight("  status writes per Workload "+writesWhy, " "), target: fmt.Sprintf("≤ %g", writes),
			value: rolloutValue(pick, func(c *rolloutChange) float64 { return c.StatusWritesPerWorkload }),
			met:   func(v float64) bool { return v <= writes }},
		{key: prefix + "EarlyWrites", label: "  status writes to Workloads not yet admitted (watched)", target: "0",
			value: rolloutValue(pick, func(c *rolloutChange) float64 { return float64(c.EarlyWrites) }),
			met:   func(v float64) bool { return v == 0 }},
		{key: prefix + "Requests", label: "  API requests per Workload (controller and stamper, leader election aside)",
			value: rolloutValue(pick, func(c *rolloutChange) float64 { return c.RequestsPerWorkload })},
	}
}

// rolloutValue reads a figure of the rollout phase's change that pick chooses.
func rolloutValue(pick func(*rolloutResult) *rolloutChange, v func(*rolloutChange) float64) func(*runResult) (float64, bool) {
	return func(r *runResult) (float64, bool) {
		if r.Rollout == nil || pick(r.Rollout) == nil {
			return 0, false
		}
		return v(pick(r.Rollout)), true
	}
}

// figures reads every defined figure from runs of the same N and judges the medians.
func figures(runs []*runResult) []figure {
	var out []figure
	for _, d := range figureDefs {
		f := figure{Key: d.key, Label: d.label, Unit: d.unit}
		for _, r := range runs {
			if v, ok := d.value(r); ok {
				f.Values = append(f.Values, v)
			}
		}
		if len(f.Values) == 0 {
			continue
		}
		f.Median = median(f.Values)
		if d.met != nil {
			f.Target = d.target
			if d.atN == 0 || d.atN == runs[0].N {
				met := d.met(f.Median)
				f.Met = &met
			}
		}
		out = append(out, f)
	}
	return out
}

// printFigures writes the summary table: one column per run, then the median.
func printFigures(w io.Writer, n int, figs []figure) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	runs := 0
	for _, f := range figs {
		runs = max(runs, len(f.Values))
	}
	head := []string{fmt.Sprintf("N=%d", n)}
	for i := range runs {
		if runs > 1 {
			head = append(head, fmt.Sprintf("run %d", i+1))
		}
	}
	head = append(head, map[bool]string{true: "median", false: "value"}[runs > 1], "target", "")
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, f := range figs {
		row := []string{f.Label}
		if runs > 1 {
			for i := range runs {
				if i < len(f.Values) {
					row = append(row, formatValue(f.Values[i], f.Unit))
				} else {
					row = append(row, "")
				}
			}
		}
		verdict := ""
		if f.Met != nil {
			verdict = map[bool]string{true: "ok", false: "MISSED"}[*f.Met]
		}
		row = append(row, formatValue(f.Median, f.Unit), f.Target, verdict)
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	tw.Flush()
}

func formatValue(v float64, unit string) string {
	var s string
	switch {
	case v == math.Trunc(v) && math.Abs(v) < 1e6:
		s = fmt.Sprintf("%.0f", v)
	case math.Abs(v) >= 100:
		s = fmt.Sprintf("%.0f", v)
	case math.Abs(v) >= 10:
		s = fmt.Sprintf("%.1f", v)
	default:
		s = fmt.Sprintf("%.2f", v)
	}
	if unit == "" {
		return s
	}
	if unit == "×" || unit == "/s" {
		return s + unit
	}
	return s + " " + unit
}

// printDetails writes one run's breakdowns: requests by identity and bucket, the API
// server's own counts, reconcile results, and the profile's hottest functions.
func printDetails(w io.Writer, r *runResult) {
	c := r.Convergence
	fmt.Fprintf(w, "\nRequests while converging, per Workload (N=%d), by identity (FlowSchema counts):\n", r.N)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	buckets := append([]string{}, verbBuckets...)
	buckets = append(buckets, bucketDiscovery, bucketLease, bucketOther)
	fmt.Fprintln(tw, "identity\t"+strings.Join(buckets, "\t")+"\ttotal")
	for _, id := range identities {
		row := []string{id.short}
		for _, b := range buckets {
			row = append(row, fmt.Sprintf("%.2f", c.Requests[id.short][b]/float64(r.N)))
		}
		row = append(row, fmt.Sprintf("%.2f", c.Requests.total(id.short)/float64(r.N)))
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	tw.Flush()

	fmt.Fprintf(w, "\nkube-apiserver apiserver_request_total while converging, per Workload (every client; the harness made N Workload creates):\n")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for i, k := range sortedKeys(c.APIServerRequests) {
		if i == 15 || c.APIServerRequests[k] < float64(r.N)/100 {
			break
		}
		fmt.Fprintf(tw, "  %s\t%.2f\n", k, c.APIServerRequests[k]/float64(r.N))
	}
	tw.Flush()

	fmt.Fprintf(w, "\nMachine while converging: %.0f%% busy (the controller %.0f%% of it), load average %.1f at the end (%d cores)\n",
		100*c.MachineBusy, 100*c.ControllerShare, c.LoadAverage, runtime.NumCPU())
	fmt.Fprintf(w, "Control-plane CPU while converging: %s", formatSeconds(c.ControlPlaneCPUSeconds))
	if r.Floor != nil {
		fmt.Fprintf(w, "; in the floor: %s", formatSeconds(r.Floor.ControlPlaneCPUSeconds))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Workload reconciles by result: %s; controller client requests by method and code: %s\n",
		formatCounts(c.Reconciles), formatCounts(c.ClientRequests))
	if r.Settle != nil {
		fmt.Fprintf(w, "After the last Ready the controller made %.0f more requests over %.1f s (%s)%s\n",
			r.Settle.Requests.all(false), r.Settle.Seconds, bucketSummary(r.Settle.Requests),
			map[bool]string{true: " and had not stopped when the settle timed out", false: ""}[r.Settle.TimedOut])
		perWorkload := map[string]float64{}
		for k, v := range r.Settle.Events {
			perWorkload[k] = v / float64(r.N)
		}
		fmt.Fprintf(w, "Events recorded per Workload, by reason: %s\n", formatRates(perWorkload))
	}
	if r.Rest != nil {
		fmt.Fprintf(w, "At rest over %.0f s: %s; controller CPU %.2f s; %0.f reconciles\n",
			r.Rest.WindowSeconds, bucketSummary(r.Rest.Requests), r.Rest.ControllerCPUSeconds, r.Rest.Reconciles)
	}
	if rs := r.Restart; rs != nil {
		fmt.Fprintf(w, "Restart (SIG%s): ready %.1f s, leader %.1f s, every Workload reconciled %.1f s, quiet %.1f s after the start%s; reconciles by result: %s; %s; Events since the start: %s; writes by the API server's count (every client): %s; the watch saw %d status changes to %d Workloads, %d transitions (%s); controller CPU %.2f s, peak RSS %.1f MiB\n",
			rs.Signal, rs.ReadySeconds, rs.LeaderSeconds, rs.ReconciledSeconds, rs.QuietSeconds,
			map[bool]string{true: " (not quiet when the settle timed out)", false: ""}[rs.QuietTimedOut],
			formatCounts(rs.Reconciles), bucketSummary(rs.Requests), formatCounts(rs.EventsSince), formatCounts(rs.WritesByVerbResource),
			rs.StatusChanges, rs.WorkloadsChanged, rs.Transitions, formatIntCounts(rs.TransitionsBy), rs.ControllerCPUSeconds, rs.PeakRSSMiB)
	}
	if p := r.Propagation; p != nil {
		fmt.Fprintf(w, "Propagation over %d objects: to unhealthy p50 %.1f ms p99 %.1f ms; back to healthy p50 %.1f ms p99 %.1f ms; max %.1f ms; %d timeouts\n",
			p.K, percentile(p.ToUnhealthyMs, 50), percentile(p.ToUnhealthyMs, 99),
			percentile(p.ToHealthyMs, 50), percentile(p.ToHealthyMs, 99), p.MaxMs, p.Timeouts)
	}
	if ro := r.Rollout; ro != nil {
		fmt.Fprintf(w, "Rollout: strategy set (type All), first revision on every Workload in %.1f s with %.0f status writes\n",
			ro.EnableSeconds, ro.EnableStatusWrites)
		for _, c := range []*rolloutChange{ro.PerGroup, ro.All} {
			if c == nil {
				continue
			}
			kind := c.Type
			if c.Groups > 0 {
				kind += fmt.Sprintf(", %d groups", c.Groups)
			}
			fmt.Fprintf(w, "  %s: switching to it made %.0f status writes (%s); template change rolled out in %.1f s: %.0f applies for %d changed objects, %.0f status writes (%s; the watch saw %d status changes, %d of them to %d Workloads not yet admitted), %.0f requests (%s)\n",
				kind, c.SwitchStatusWrites, formatCounts(c.SwitchStatusWritesByCode), c.Seconds, c.Applies, c.ChangedObjects, c.StatusWrites, formatCounts(c.StatusWritesByCode),
				c.WatchedStatusChanges, c.EarlyWrites, c.EarlyWorkloads, c.Requests.all(false), bucketSummary(c.Requests))
		}
	}
	if i := r.Isolation; i != nil {
		labelled := ""
		if i.Labelled {
			labelled = " (with Surveyor's resource-name label)"
		}
		fmt.Fprintf(w, "Isolation: %d ConfigMaps%s created in %.0f s; VmRSS %.1f → %.1f MiB, heap in use %.1f → %.1f MiB, live heap %+.1f MiB; controller made %.0f requests and used %.2f s CPU meanwhile\n",
			i.Objects, labelled, i.CreateSeconds, i.RSSBeforeMiB, i.RSSAfterMiB, i.HeapBeforeMiB, i.HeapAfterMiB, i.LiveHeapDeltaMiB, i.Requests, i.ControllerCPUSeconds)
	}
	if p := r.Profile; p != nil {
		if p.CPUTop != "" {
			fmt.Fprintf(w, "\nController CPU profile while converging (%s), top by flat time:\n%s", p.CPU, indent(headLines(p.CPUTop, 22)))
		}
		if p.CPUCum != "" {
			fmt.Fprintf(w, "\nTop by cumulative time:\n%s", indent(headLines(p.CPUCum, 32)))
		}
		if p.HeapTop != "" {
			fmt.Fprintf(w, "\nHeap in use after convergence (%s):\n%s", p.Heap, indent(headLines(p.HeapTop, 16)))
		}
		for _, e := range p.Errors {
			fmt.Fprintf(w, "profile: %s\n", e)
		}
	}
}

// bucketSummary lists the non-zero buckets of every identity.
func bucketSummary(r requestCounts) string {
	var parts []string
	for _, id := range identities {
		for _, b := range sortedKeys(r[id.short]) {
			if v := r[id.short][b]; v != 0 {
				parts = append(parts, fmt.Sprintf("%s %s %.0f", id.short, b, v))
			}
		}
	}
	if len(parts) == 0 {
		return "no requests"
	}
	return strings.Join(parts, ", ")
}

func formatCounts(m map[string]float64) string {
	var parts []string
	for _, k := range sortedKeys(m) {
		parts = append(parts, fmt.Sprintf("%s=%.0f", k, m[k]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " ")
}

// formatSeconds lists each process's CPU seconds, in controlPlane's order.
func formatSeconds(m map[string]float64) string {
	var parts []string
	for _, name := range controlPlane {
		parts = append(parts, fmt.Sprintf("%s %.1f s", name, m[name]))
	}
	return strings.Join(parts, ", ")
}

func formatRates(m map[string]float64) string {
	var parts []string
	for _, k := range sortedKeys(m) {
		parts = append(parts, fmt.Sprintf("%s=%.2f", k, m[k]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " ")
}

func headLines(s string, n int) string {
	lines := strings.SplitAfter(s, "\n")
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "")
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ") + "\n"
}

// sumValues is the sum of m's values.
func sumValues(m map[string]float64) float64 {
	var sum float64
	for _, v := range m {
		sum += v
	}
	return sum
}

// median of vs (which it sorts a copy of); 0 for none.
func median(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	s := append([]float64{}, vs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// percentile is the nearest-rank p-th percentile of vs; 0 for none.
func percentile(vs []float64, p float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	s := append([]float64{}, vs...)
	sort.Float64s(s)
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	return s[min(max(rank, 1), len(s))-1]
}

// report is what a benchmark writes to bench/results/<date>.json.
type report struct {
	Date   string `json:"date"`
	Commit string `json:"commit,omitempty"`
	// Controller is the measured binary's build info (see controllerBuild).
	Controller string         `json:"controller"`
	CPUs       int            `json:"cpus"`
	Options    map[string]any `json:"options"`
	Runs       []*runResult   `json:"runs"`
	Figures    []figure       `json:"figures,omitempty"`
	Scale      []scalePoint   `json:"scale,omitempty"`
	Growth     float64        `json:"growth,omitempty"`
	Shards     []*shardRun    `json:"shards,omitempty"`
	Failures   []string       `json:"failures,omitempty"`
}

func writeJSON(path string, v any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
