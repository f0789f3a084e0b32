// Command bench measures Surveyor on the local control plane of hack/cluster (`make
// bench`, `make bench-scale`). It starts the cluster and the controller, and reads
// metrics and /proc, through internal/harness, as the Go end-to-end suites do. Each run
// starts a fresh cluster and, in order:
//
//  1. floor: a plain client makes the writes the controller must make for N Workloads
//     (N Workload creates, 3N object creates, N status writes) with the controller's
//     worker count and no client-side rate limit (the API server's own capacity, with
//     priority and fairness on), in a namespace no controller selects, before the
//     controller starts; the namespace is then deleted;
//  2. convergence: the controller (bin/surveyor, as its ServiceAccount with its RBAC)
//     starts; N Workloads are created at once from parallel goroutines and watched
//     until every one is Ready. Requests are counted per identity (the controller and
//     the stamping ServiceAccount it impersonates) through FlowSchemas, CPU and peak
//     RSS read from /proc, and with -profile a CPU profile taken from the pprof endpoint;
//  3. settle: wait until the controller stops making requests (leader election aside);
//  4. at rest: the controller's requests and writes over a window with nothing changing;
//  5. restart: the controller is killed (-restart-signal) and started again with the same
//     flags; the writes the new process makes, the Workload condition transitions a
//     watch sees, and the time until it is ready, leads, and has reconciled every
//     Workload once, until it is quiet (DESIGN §12: a restart writes nothing and flaps
//     no status while caches fill);
//  6. propagation: K stamped objects flipped unhealthy and back, one at a time, timing
//     each until the Workload's ResourcesHealthy follows;
//  7. rollout: rolloutStrategy type All set on the supply chain; then type
//     ProgressivePerGroup over -rollout-groups groups (the Workloads are labelled into
//     them round robin when created), a template change that alters one stamped object
//     per Workload, type All again and another such change; for each change the time
//     until the rollout is complete, the applies, the status writes (and, from the watch,
//     those to Workloads not yet admitted) and the requests, until the controller is quiet;
//  8. isolation: 20,000 unrelated ConfigMaps in another namespace (with Surveyor's
//     resource-name label under -isolation-labelled), and the controller's RSS before
//     and after.
//
// With -shards K it runs none of these: per run, N Workloads converge on a fresh cluster
// with one replica, then on another with K replicas each realizing one shard
// (shards.go), and it reports the time and each replica's CPU and peak RSS.
//
// It prints tables and writes bench/results/<date>.json, with profiles (-profile) under
// bench/results/<date>/. Run it from the repository root.
package main

import (
	"context"
	"crypto/sha256"
	"debug/buildinfo"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// options are the command line.
type options struct {
	n, runs             int
	scale               []int
	creators            int
	createQPS           float64
	qps                 float64
	burst, concurrency  int
	controller          string
	controllerArgs      string
	controllerEnv       string
	leaderElect         bool
	ytt                 bool
	rest, settleTimeout time.Duration
	timeout             time.Duration
	k, isolation        int
	isolationSettle     time.Duration
	isolationLabelled   bool
	skipFloor           bool
	skipSettle          bool
	skipRest            bool
	skipRestart         bool
	restartSignal       string
	skipPropagation     bool
	skipIsolation       bool
	skipRollout         bool
	rolloutGroups       int
	shards              int
	profile             bool
	out, dir            string
	verbose             bool
	idleWait            time.Duration
	idleBelow           float64
}

func parseFlags() (*options, map[string]any, error) {
	o := &options{}
	// A flag set of the bench's own: the packages it links (controller-runtime's client
	// config) register flags of theirs on flag.CommandLine, which are no flags of the
	// bench's and would show in -h and in the results' options.
	fs := flag.NewFlagSet(os.Args[0], flag.ExitOnError)
	fs.IntVar(&o.n, "n", 1000, "Workloads to create")
	scale := fs.String("scale", "", "comma-separated Ns (e.g. 100,1000,5000): one run per N (times -runs), reporting time per Workload and its growth")
	fs.IntVar(&o.runs, "runs", 1, "runs per N, each on a fresh cluster; tables report the median")
	fs.IntVar(&o.creators, "creators", 16, "goroutines creating Workloads")
	fs.Float64Var(&o.createQPS, "create-qps", -1, "QPS of the harness's client creating Workloads, as in the floor (burst is twice that); negative: no client-side limit")
	fs.Float64Var(&o.qps, "qps", 1000, "controller --kube-api-qps (the floor has no client-side limit)")
	fs.IntVar(&o.burst, "burst", 2000, "controller --kube-api-burst")
	fs.IntVar(&o.concurrency, "concurrency", 8, "controller --max-concurrent-reconciles, and the floor's workers")
	fs.StringVar(&o.controller, "controller", "bin/surveyor", "the controller binary")
	fs.StringVar(&o.controllerArgs, "controller-args", "", "extra controller flags, space-separated")
	fs.StringVar(&o.controllerEnv, "controller-env", "", "environment for the controller alone, space-separated (e.g. GOMEMLIMIT=90MiB GOGC=200)")
	fs.BoolVar(&o.ytt, "ytt", false, "the supply chain's templates written in ytt (supplychain-ytt.yaml), evaluated in the controller's ytt workers")
	fs.BoolVar(&o.leaderElect, "leader-elect", true, "run the controller with leader election, as deployed (its lease traffic is reported apart)")
	fs.DurationVar(&o.rest, "rest", 60*time.Second, "the at-rest window")
	fs.DurationVar(&o.settleTimeout, "settle-timeout", 5*time.Minute, "longest wait for the controller to go quiet after convergence")
	fs.DurationVar(&o.timeout, "timeout", 30*time.Minute, "longest wait for convergence")
	fs.IntVar(&o.k, "k", 50, "stamped objects whose health the propagation probe flips")
	fs.IntVar(&o.isolation, "isolation", 20000, "unrelated ConfigMaps the isolation probe creates")
	fs.DurationVar(&o.isolationSettle, "isolation-settle", 15*time.Second, "wait after creating them before reading RSS")
	fs.BoolVar(&o.isolationLabelled, "isolation-labelled", false, "give the isolation probe's ConfigMaps Surveyor's resource-name label, as a tenant may label its own objects: the controller's ConfigMap informer then selects them")
	fs.BoolVar(&o.skipFloor, "skip-floor", false, "skip the floor")
	fs.BoolVar(&o.skipSettle, "skip-settle", false, "skip waiting for the controller to go quiet (and the at-rest window, which needs it)")
	fs.BoolVar(&o.skipRest, "skip-rest", false, "skip the at-rest window")
	fs.BoolVar(&o.skipRestart, "skip-restart", false, "skip the controller restart")
	fs.StringVar(&o.restartSignal, "restart-signal", "KILL", "how the restart phase stops the controller: KILL (a crash; the new process waits for the old lease to expire) or TERM (a rolling update; the lease is released)")
	fs.BoolVar(&o.skipPropagation, "skip-propagation", false, "skip the propagation probe")
	fs.BoolVar(&o.skipIsolation, "skip-isolation", false, "skip the isolation probe")
	fs.BoolVar(&o.skipRollout, "skip-rollout", false, "skip the rollout of template changes (rolloutStrategy ProgressivePerGroup, then All)")
	fs.IntVar(&o.rolloutGroups, "rollout-groups", 10, "groups of the ProgressivePerGroup rollout (Workloads are labelled g0, g1, ... round robin); 0: only the rollout of type All")
	fs.IntVar(&o.shards, "shards", 0, "instead of the phases above: per run, N Workloads converged on a fresh cluster by one replica, then on another by this many replicas, one per shard (--watch-label-selector on "+v1alpha1.LabelShardKey+", the Workloads spread round robin); the time, and each replica's CPU and peak RSS")
	fs.BoolVar(&o.profile, "profile", false, "take the controller's CPU profile while converging, and its heap profile after (the profiler costs the controller about 1.4 MiB of peak RSS and a few % of CPU, so leave it off for figures)")
	fs.StringVar(&o.out, "out", "bench/results", "directory for results")
	fs.StringVar(&o.dir, "dir", "", "keep the cluster's working directory (logs, etcd) here instead of a temporary one")
	fs.BoolVar(&o.verbose, "v", false, "show the cluster's progress")
	fs.DurationVar(&o.idleWait, "idle-wait", 5*time.Minute, "before each run, wait up to this long for the machine to be idle (0: don't)")
	fs.Float64Var(&o.idleBelow, "idle-below", 25, "percentage of the machine's CPU below which it counts as idle")
	_ = fs.Parse(os.Args[1:]) // ExitOnError: it exits on an error
	if *scale != "" {
		for _, s := range strings.Split(*scale, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil || n <= 0 {
				return nil, nil, fmt.Errorf("-scale: %q is not a positive number", s)
			}
			o.scale = append(o.scale, n)
		}
	}
	if o.skipSettle {
		o.skipRest = true
	}
	if o.n <= 0 || o.runs <= 0 || o.creators <= 0 || o.concurrency <= 0 {
		return nil, nil, errors.New("-n, -runs, -creators and -concurrency must be positive")
	}
	if o.restartSignal != "KILL" && o.restartSignal != "TERM" {
		return nil, nil, errors.New("-restart-signal must be KILL or TERM")
	}
	if o.shards == 1 || o.shards < 0 {
		return nil, nil, errors.New("-shards must be 0 (off) or at least 2")
	}
	if o.rolloutGroups < 0 || o.rolloutGroups > 64 {
		return nil, nil, errors.New("-rollout-groups must be from 0 to 64 (a rolloutStrategy has at most 64 groups)")
	}
	set := map[string]any{}
	fs.VisitAll(func(f *flag.Flag) { set[f.Name] = f.Value.String() })
	return o, set, nil
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, time.Now().Format("15:04:05")+" "+format+"\n", args...)
}

func run() error {
	opts, flags, err := parseFlags()
	if err != nil {
		return err
	}
	// The Workload watch (harness.Env.Watch) would log through controller-runtime; what
	// the bench prints is its own lines and tables.
	ctrllog.SetLogger(logr.Discard())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	stamp := time.Now().Format("2006-01-02T150405")
	rep := &report{Date: stamp, Commit: commit(), Controller: controllerBuild(opts.controller), CPUs: runtime.NumCPU(), Options: flags}
	logf("controller %s", rep.Controller)
	jsonPath := filepath.Join(opts.out, stamp+".json")
	sizes := opts.scale
	if len(sizes) == 0 {
		sizes = []int{opts.n}
	}
	if opts.shards > 1 {
		return runShards(ctx, opts, rep, jsonPath)
	}
	for _, n := range sizes {
		var runs []*runResult
		for i := range opts.runs {
			logf("N=%d, run %d of %d", n, i+1, opts.runs)
			if err := waitIdle(ctx, opts.idleWait, opts.idleBelow/100); err != nil {
				return err
			}
			dir := filepath.Join(opts.out, stamp, fmt.Sprintf("n%d-run%d", n, i+1))
			r, err := runOnce(ctx, opts, n, dir)
			if err != nil {
				if ctx.Err() != nil {
					return err
				}
				rep.Failures = append(rep.Failures, fmt.Sprintf("N=%d run %d: %v", n, i+1, err))
				logf("run failed: %v", err)
				continue
			}
			printDetails(os.Stdout, r)
			runs = append(runs, r)
			rep.Runs = append(rep.Runs, r)
			if err := writeJSON(jsonPath, rep); err != nil {
				return err
			}
		}
		if len(runs) == 0 {
			continue
		}
		figs := figures(runs)
		rep.Figures = append(rep.Figures, figs...)
		fmt.Println()
		printFigures(os.Stdout, n, figs)
		rep.Scale = append(rep.Scale, scalePointOf(n, figs))
	}
	if len(sizes) > 1 && len(rep.Scale) > 1 {
		rep.Growth = printScale(os.Stdout, rep.Scale)
	} else {
		rep.Scale = nil
	}
	if err := writeJSON(jsonPath, rep); err != nil {
		return err
	}
	fmt.Printf("\nresults: %s\n", jsonPath)
	if len(rep.Failures) > 0 {
		return fmt.Errorf("%d run(s) failed: %s", len(rep.Failures), strings.Join(rep.Failures, "; "))
	}
	return nil
}

// runShards runs -shards: per run, one replica, then the shards, each on a fresh cluster.
func runShards(ctx context.Context, opts *options, rep *report, jsonPath string) error {
	for i := range opts.runs {
		for _, k := range []int{1, opts.shards} {
			logf("N=%d, %d replica(s), run %d of %d", opts.n, k, i+1, opts.runs)
			if err := waitIdle(ctx, opts.idleWait, opts.idleBelow/100); err != nil {
				return err
			}
			r, err := runShardRun(ctx, opts, opts.n, k)
			if err != nil {
				return err
			}
			rep.Shards = append(rep.Shards, r)
			if err := writeJSON(jsonPath, rep); err != nil {
				return err
			}
		}
	}
	printShards(os.Stdout, rep.Shards)
	fmt.Printf("\nresults: %s\n", jsonPath)
	return nil
}

// runOnce is one run on a fresh cluster; see the package comment for its phases.
func runOnce(ctx context.Context, opts *options, n int, dir string) (_ *runResult, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	r := &runResult{N: n}
	if !opts.skipFloor {
		if r.Floor, err = runFloorCluster(ctx, opts, n); err != nil {
			return nil, err
		}
	}
	e, err := newEnv(ctx, opts, opts.dir, logf)
	if err != nil {
		return nil, err
	}
	defer e.Stop()
	defer func() {
		if err != nil {
			e.saveControllerLog(dir)
		}
	}()
	if opts.dir != "" {
		r.ClusterDir = e.Cluster.Dir
	}
	if err := e.waitQuiet(ctx); err != nil {
		return nil, err
	}
	if err := e.startController(ctx); err != nil {
		return nil, err
	}
	t, stopTracker, err := e.applySupplyChain(ctx, n)
	if err != nil {
		return nil, err
	}
	defer stopTracker()
	logf("converging %d Workloads (controller pid %d)", n, e.controller.Pid())
	prof := newProfiler(opts.profile, e.controller.PprofURL, dir)
	conv, after, err := e.converge(ctx, t, n, prof)
	if err != nil {
		return nil, err
	}
	r.Convergence = conv
	if r.Floor != nil && r.Floor.Seconds > 0 {
		conv.RatioToFloor = conv.Seconds / r.Floor.Seconds
	}
	logf("converged in %.1f s (%.2f ms per Workload), %.1f requests per Workload, CPU %.2f s, peak RSS %.1f MiB",
		conv.Seconds, conv.PerWorkloadMs, conv.RequestsPerWorkload, conv.ControllerCPUSeconds, conv.PeakRSSMiB)
	if !opts.skipSettle {
		if r.Settle, _, err = e.settle(ctx, after); err != nil {
			return nil, err
		}
		logf("controller quiet %.1f s after the last Ready", r.Settle.Seconds)
	}
	if !opts.skipRest {
		logf("at rest for %s", opts.rest)
		if r.Rest, err = e.atRest(ctx); err != nil {
			return nil, err
		}
	}
	if !opts.skipRestart {
		// After the at-rest window, with every Workload Ready and the controller quiet,
		// and before the phases that change templates and objects: the restart must
		// find nothing to do.
		logf("restart: SIG%s to the controller, then the same binary and flags", opts.restartSignal)
		if r.Restart, err = e.restart(ctx, t, n); err != nil {
			return nil, err
		}
		logf("restart: ready after %.1f s, leader after %.1f s, every Workload reconciled after %.1f s; %.0f writes, %d condition transitions",
			r.Restart.ReadySeconds, r.Restart.LeaderSeconds, r.Restart.ReconciledSeconds, r.Restart.Writes, r.Restart.Transitions)
	}
	if !opts.skipPropagation {
		logf("propagation: flipping %d objects", min(opts.k, n))
		if r.Propagation, err = e.propagate(ctx, t, n); err != nil {
			return nil, err
		}
	}
	if !opts.skipRollout {
		logf("rollout: rolloutStrategy type All on %d Workloads", n)
		if r.Rollout, err = e.rollout(ctx, t, n); err != nil {
			return nil, err
		}
		for _, c := range []*rolloutChange{r.Rollout.PerGroup, r.Rollout.All} {
			if c != nil {
				logf("rollout (%s): %.1f s; %.2f applies per changed object, %.2f status writes per Workload, %d to Workloads not yet admitted, %.2f requests per Workload",
					c.Type, c.Seconds, c.AppliesPerChangedObject, c.StatusWritesPerWorkload, c.EarlyWrites, c.RequestsPerWorkload)
			}
		}
	}
	if !opts.skipIsolation {
		logf("isolation: %d unrelated ConfigMaps", opts.isolation)
		if r.Isolation, err = e.isolate(ctx); err != nil {
			return nil, err
		}
	}
	r.Profile = prof.summarize(ctx)
	return r, nil
}

// runFloorCluster measures the floor on a cluster of its own, started and stopped for
// it, so that the controller's run starts on a cluster as fresh as the floor's: no
// tens of thousands of deleted objects for etcd, the API server and the garbage
// collector to work through.
func runFloorCluster(ctx context.Context, opts *options, n int) (*floorResult, error) {
	e, err := newEnv(ctx, opts, "", logf)
	if err != nil {
		return nil, err
	}
	defer e.Stop()
	logf("floor: %d Workloads, %d objects, %d status writes (no client-side limit, %d creators, %d workers)", n, 3*n, n, opts.creators, opts.concurrency)
	f, err := e.runFloor(ctx, n)
	if err != nil {
		return nil, err
	}
	logf("floor: %.1f s", f.Seconds)
	return f, nil
}

// waitIdle waits, up to limit, until the machine's CPU has been less than below busy
// for 10 s. The machine is shared; a run started while others compile or test
// measures them as much as the controller. After the limit it goes ahead anyway.
func waitIdle(ctx context.Context, limit time.Duration, below float64) error {
	if limit <= 0 {
		return nil
	}
	deadline := time.Now().Add(limit)
	prev, err := readMachine()
	if err != nil {
		return err
	}
	quiet, lastLog := 0, time.Time{}
	for quiet < 2 {
		select {
		case <-time.After(5 * time.Second):
		case <-ctx.Done():
			return ctx.Err()
		}
		cur, err := readMachine()
		if err != nil {
			return err
		}
		busy := busyShare(prev, cur)
		prev = cur
		if busy < below {
			quiet++
			continue
		}
		quiet = 0
		if time.Now().After(deadline) {
			logf("the machine is still %.0f%% busy after %s; going ahead", 100*busy, limit)
			return nil
		}
		if time.Since(lastLog) > time.Minute {
			logf("waiting for the machine to be idle: %.0f%% busy", 100*busy)
			lastLog = time.Now()
		}
	}
	return nil
}

// saveControllerLog copies the controller's log next to the results and shows its end.
func (e *env) saveControllerLog(dir string) {
	b, err := os.ReadFile(e.Cluster.LogPath(controllerName))
	if err != nil {
		return
	}
	path := filepath.Join(dir, "surveyor.log")
	_ = os.WriteFile(path, b, 0o644)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	fmt.Fprintf(os.Stderr, "--- controller log (last 40 lines; all of it in %s) ---\n%s\n", path,
		strings.Join(lines[max(0, len(lines)-40):], "\n"))
}

// scalePoint is one N of a scale series (medians over its runs).
type scalePoint struct {
	N                   int     `json:"n"`
	ConvergenceSeconds  float64 `json:"convergenceSeconds"`
	PerWorkloadMs       float64 `json:"perWorkloadMs"`
	FloorSeconds        float64 `json:"floorSeconds,omitempty"`
	RatioToFloor        float64 `json:"ratioToFloor,omitempty"`
	CPUSeconds          float64 `json:"cpuSeconds"`
	PeakRSSMiB          float64 `json:"peakRSSMiB"`
	RequestsPerWorkload float64 `json:"requestsPerWorkload"`
	MachineBusyPercent  float64 `json:"machineBusyPercent"`
	// PlaneCPUPerWorkloadMs is the control plane's CPU per Workload while converging,
	// FloorPlaneCPUPerWorkloadMs in the floor.
	PlaneCPUPerWorkloadMs      float64 `json:"planeCPUPerWorkloadMs"`
	FloorPlaneCPUPerWorkloadMs float64 `json:"floorPlaneCPUPerWorkloadMs,omitempty"`
}

func scalePointOf(n int, figs []figure) scalePoint {
	v := map[string]float64{}
	for _, f := range figs {
		v[f.Key] = f.Median
	}
	return scalePoint{
		N: n, ConvergenceSeconds: v["convergence"], PerWorkloadMs: v["perWorkload"], FloorSeconds: v["floor"],
		RatioToFloor: v["ratio"], CPUSeconds: v["cpu"], PeakRSSMiB: v["peakRSS"], RequestsPerWorkload: v["requestsPerWorkload"],
		MachineBusyPercent: v["machineBusy"], PlaneCPUPerWorkloadMs: v["planeCPU"], FloorPlaneCPUPerWorkloadMs: v["floorPlaneCPU"],
	}
}

// printScale prints the growth table and returns the time per Workload at the largest
// N over that at the smallest.
func printScale(w *os.File, points []scalePoint) float64 {
	fmt.Fprintln(w, "\nGrowth:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "N\tconvergence\tper Workload\tfloor\tratio\tCPU\tCPU per Workload\tpeak RSS\trequests/Workload\tmachine busy\tcontrol plane CPU/Workload\tin the floor")
	for _, p := range points {
		fmt.Fprintf(tw, "%d\t%.1f s\t%.2f ms\t%.1f s\t%.2f×\t%.2f s\t%.2f ms\t%.1f MiB\t%.2f\t%.0f%%\t%.1f ms\t%.1f ms\n", p.N, p.ConvergenceSeconds, p.PerWorkloadMs,
			p.FloorSeconds, p.RatioToFloor, p.CPUSeconds, p.CPUSeconds*1000/float64(p.N), p.PeakRSSMiB, p.RequestsPerWorkload, p.MachineBusyPercent,
			p.PlaneCPUPerWorkloadMs, p.FloorPlaneCPUPerWorkloadMs)
	}
	tw.Flush()
	// The target compares the largest N with N=1000; without a 1000 point,
	// with the smallest.
	first, last := points[0], points[len(points)-1]
	for _, p := range points {
		if p.N == 1000 && p.N != last.N {
			first = p
		}
	}
	growth := last.PerWorkloadMs / first.PerWorkloadMs
	verdict := "ok"
	if growth > 1.2 {
		verdict = "MISSED"
	}
	fmt.Fprintf(w, "Time per Workload, N=%d vs N=%d: %.2f× (target ≤ 1.2×) %s\n", last.N, first.N, growth, verdict)
	// The floor itself slows as etcd grows; against the floor at each N, and in CPU per
	// Workload, the controller's own scaling shows.
	if first.RatioToFloor > 0 && last.RatioToFloor > 0 {
		fmt.Fprintf(w, "  convergence/floor, N=%d vs N=%d: %.2f×\n", last.N, first.N, last.RatioToFloor/first.RatioToFloor)
	}
	fmt.Fprintf(w, "  controller CPU per Workload, N=%d vs N=%d: %.2f×\n", last.N, first.N, (last.CPUSeconds/float64(last.N))/(first.CPUSeconds/float64(first.N)))
	if first.PlaneCPUPerWorkloadMs > 0 {
		fmt.Fprintf(w, "  control-plane CPU per Workload, N=%d vs N=%d: %.2f× converging", last.N, first.N, last.PlaneCPUPerWorkloadMs/first.PlaneCPUPerWorkloadMs)
		if first.FloorPlaneCPUPerWorkloadMs > 0 {
			fmt.Fprintf(w, ", %.2f× in the floor", last.FloorPlaneCPUPerWorkloadMs/first.FloorPlaneCPUPerWorkloadMs)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "  peak RSS per Workload at N=%d: %.1f KiB (target ≤ 40 KiB)\n", last.N, last.PeakRSSMiB*1024/float64(last.N))
	return growth
}

// controllerBuild identifies the controller binary, which (not the checkout) is what
// was measured: the commit in its build info when it has one (not with
// -buildvcs=false), a digest of the file, and when it was built.
func controllerBuild(path string) string {
	desc := path
	if info, err := buildinfo.ReadFile(path); err == nil {
		for _, s := range info.Settings {
			switch {
			case s.Key == "vcs.revision":
				desc += " " + s.Value[:min(12, len(s.Value))]
			case s.Key == "vcs.modified" && s.Value == "true":
				desc += "-dirty"
			}
		}
	}
	if b, err := os.ReadFile(path); err == nil {
		sum := sha256.Sum256(b)
		desc += fmt.Sprintf(" sha256:%x", sum[:6])
	}
	if fi, err := os.Stat(path); err == nil {
		desc += ", built " + fi.ModTime().Format(time.RFC3339)
	}
	return desc
}

// commit names the checked-out commit, marked dirty when the tree has changes.
func commit() string {
	out, err := exec.Command("git", "describe", "--always", "--dirty").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
