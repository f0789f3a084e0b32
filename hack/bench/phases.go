package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/internal/harness"
	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// snapshot is everything read at one instant: kube-apiserver's counters, the
// controller's own metrics and its /proc figures.
type snapshot struct {
	at         time.Time
	apiserver  harness.Metrics
	controller harness.Metrics
	proc       harness.ProcStat
	// workers are the controller's ytt worker processes, added up.
	workers harness.ProcStat
	machine machineStat
	// controlPlane is the CPU time each control-plane process has used.
	controlPlane map[string]time.Duration
}

func (e *env) snapshot(ctx context.Context) (snapshot, error) {
	s := snapshot{at: time.Now()}
	var err error
	if s.machine, err = readMachine(); err != nil {
		return s, err
	}
	if s.controlPlane, err = e.controlPlaneCPU(); err != nil {
		return s, err
	}
	if s.workers, err = harness.ReadChildren(e.controller.Pid()); err != nil {
		return s, err
	}
	if s.proc, err = e.controller.Proc(); err != nil {
		return s, fmt.Errorf("reading the controller's /proc (did it exit? see %s): %w", e.controller.LogPath(), err)
	}
	if s.apiserver, err = e.scrapeAPIServer(ctx); err != nil {
		return s, err
	}
	if s.controller, err = e.scrapeController(ctx); err != nil {
		return s, err
	}
	return s, nil
}

// convergenceResult is the controller's work from the first Workload create until
// every Workload is Ready.
type convergenceResult struct {
	Seconds       float64 `json:"seconds"`
	CreateSeconds float64 `json:"createSeconds"`
	PerWorkloadMs float64 `json:"perWorkloadMs"`
	// ReadyP50Seconds is when half the Workloads were Ready.
	ReadyP50Seconds float64 `json:"readyP50Seconds"`
	RatioToFloor    float64 `json:"ratioToFloor,omitempty"`

	ControllerCPUSeconds float64 `json:"controllerCPUSeconds"`
	// ControlPlaneCPUSeconds is what the API server, etcd and kube-controller-manager
	// spent meanwhile, by process.
	ControlPlaneCPUSeconds map[string]float64 `json:"controlPlaneCPUSeconds"`
	PeakRSSMiB             float64            `json:"peakRSSMiB"`
	HeapInuseMiB           float64            `json:"heapInuseMiB"`
	// WorkerCPUSeconds and WorkerPeakRSSMiB are the ytt workers' (bench -ytt), added up.
	WorkerCPUSeconds float64 `json:"workerCPUSeconds,omitempty"`
	WorkerPeakRSSMiB float64 `json:"workerPeakRSSMiB,omitempty"`

	// Requests are per identity and bucket (FlowSchema counts, discovery included).
	Requests            requestCounts `json:"requests"`
	RequestsPerWorkload float64       `json:"requestsPerWorkload"`
	WritesPerWorkload   float64       `json:"writesPerWorkload"`
	// APIServerRequests is apiserver_request_total by "VERB resource" from every client,
	// the harness's own Workload creates and watch included.
	APIServerRequests map[string]float64 `json:"apiserverRequests"`
	// ClientRequests is the controller's own rest_client_requests_total by method and code.
	ClientRequests        map[string]float64 `json:"clientRequests"`
	Reconciles            map[string]float64 `json:"reconciles"`
	ReconcilesPerWorkload float64            `json:"reconcilesPerWorkload"`
	WorkloadWatchEvents   int                `json:"workloadWatchEvents"`
	// WorkloadKB is a converged Workload's size as JSON, as every status write and
	// watch event carries it, and ManagedFieldsKB the part of it that is managedFields.
	WorkloadKB      float64 `json:"workloadKB"`
	ManagedFieldsKB float64 `json:"managedFieldsKB"`

	// MachineBusy is the share of the whole machine's CPU that was busy while
	// converging, ControllerShare the controller's part of the machine, and LoadAverage
	// the one-minute load at the end: a shared machine makes some runs slow.
	MachineBusy     float64 `json:"machineBusy"`
	ControllerShare float64 `json:"controllerShare"`
	LoadAverage     float64 `json:"loadAverage"`
}

// converge creates N Workloads from the creators and waits, on the watch, until every
// one is Ready; it reads the counters before the first create and after the last Ready.
func (e *env) converge(ctx context.Context, t *tracker, n int, prof *profiler) (*convergenceResult, snapshot, error) {
	before, err := e.snapshot(ctx)
	if err != nil {
		return nil, before, err
	}
	prof.start(ctx)
	start := time.Now()
	createErr := make(chan error, 1)
	var createDone time.Duration
	go func() {
		err := createParallel(ctx, n, e.opts.creators, func(ctx context.Context, i int) error {
			return e.admin.Create(ctx, newWorkload(benchNamespace, workloadName(i), "bench", groupOf(i, e.opts.rolloutGroups)))
		})
		createDone = time.Since(start)
		createErr <- err
	}()
	progress := time.NewTicker(10 * time.Second)
	defer progress.Stop()
	alive := time.NewTicker(time.Second)
	defer alive.Stop()
	deadline := time.After(e.opts.timeout)
wait:
	for {
		select {
		case err := <-createErr:
			if err != nil {
				return nil, before, fmt.Errorf("creating Workloads: %w", err)
			}
			createErr = nil
		case <-t.allReady:
			break wait
		case <-progress.C:
			e.logf("  %d/%d Ready after %s", t.readyCount(), n, time.Since(start).Round(time.Second))
		case <-alive.C:
			if err := e.controllerAlive(); err != nil {
				return nil, before, err
			}
		case <-deadline:
			return nil, before, fmt.Errorf("only %d of %d Workloads Ready after %s (controller log: %s)", t.readyCount(), n, e.opts.timeout, e.controller.LogPath())
		case <-ctx.Done():
			return nil, before, ctx.Err()
		}
	}
	if createErr != nil {
		if err := <-createErr; err != nil {
			return nil, before, err
		}
	}
	ready := t.readyTimes()
	end := latest(ready)
	after, err := e.snapshot(ctx)
	if err != nil {
		return nil, before, err
	}
	prof.stop()
	prof.takeHeap(ctx)

	r := &convergenceResult{
		Seconds:                end.Sub(start).Seconds(),
		CreateSeconds:          createDone.Seconds(),
		ControllerCPUSeconds:   (after.proc.CPU - before.proc.CPU).Seconds(),
		ControlPlaneCPUSeconds: cpuDelta(before.controlPlane, after.controlPlane),
		PeakRSSMiB:             float64(after.proc.HWM) / mib,
		HeapInuseMiB:           after.controller.Sum("go_memstats_heap_inuse_bytes", nil) / mib,
		WorkerCPUSeconds:       (after.workers.CPU - before.workers.CPU).Seconds(),
		WorkerPeakRSSMiB:       float64(after.workers.HWM) / mib,
		Requests:               countRequests(before.apiserver, after.apiserver),
		APIServerRequests:      requestsByVerbResource(before.apiserver, after.apiserver),
		ClientRequests:         deltaBy(before.controller, after.controller, "rest_client_requests_total", nil, "method", "code"),
		Reconciles:             deltaBy(before.controller, after.controller, "controller_runtime_reconcile_total", map[string]string{"controller": "workload"}, "result"),
	}
	r.PerWorkloadMs = r.Seconds * 1000 / float64(n)
	r.MachineBusy = busyShare(before.machine, after.machine)
	if ticks := after.machine.total - before.machine.total; ticks > 0 {
		r.ControllerShare = (after.proc.CPU - before.proc.CPU).Seconds() * harness.UserHZ / float64(ticks)
	}
	r.LoadAverage = after.machine.load1
	r.ReadyP50Seconds = percentile(sinceAll(ready, start), 50)
	r.RequestsPerWorkload = r.Requests.all(true) / float64(n)
	r.WritesPerWorkload = r.Requests.allWrites() / float64(n)
	r.ReconcilesPerWorkload = sumValues(r.Reconciles) / float64(n)
	t.mu.Lock()
	r.WorkloadWatchEvents = t.events
	t.mu.Unlock()
	if r.WorkloadKB, r.ManagedFieldsKB, err = e.workloadSize(ctx); err != nil {
		return nil, after, err
	}
	return r, after, nil
}

// workloadSize reads the first Workload as JSON and returns its size and that of its
// managedFields, in KB.
func (e *env) workloadSize(ctx context.Context) (all, managed float64, err error) {
	wl := &unstructured.Unstructured{}
	wl.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind("Workload"))
	if err := e.admin.Get(ctx, client.ObjectKey{Namespace: benchNamespace, Name: workloadName(0)}, wl); err != nil {
		return 0, 0, err
	}
	whole, err := json.Marshal(wl.Object)
	if err != nil {
		return 0, 0, err
	}
	fields, err := json.Marshal(wl.GetManagedFields())
	if err != nil {
		return 0, 0, err
	}
	return float64(len(whole)) / 1000, float64(len(fields)) / 1000, nil
}

// controllerAlive fails when the controller process has exited, saying why if its
// log does (losing its leader-election lease ends it, for one).
func (e *env) controllerAlive() error {
	if _, err := e.controller.Proc(); err == nil {
		return nil
	}
	last := "see " + e.controller.LogPath()
	if b, err := os.ReadFile(e.controller.LogPath()); err == nil {
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		last = lines[len(lines)-1]
	}
	return fmt.Errorf("the controller exited: %s", last)
}

func latest(ts []time.Time) time.Time {
	var l time.Time
	for _, t := range ts {
		if t.After(l) {
			l = t
		}
	}
	return l
}

func sinceAll(ts []time.Time, start time.Time) []float64 {
	out := make([]float64, len(ts))
	for i, t := range ts {
		out[i] = t.Sub(start).Seconds()
	}
	return out
}

// requestsByVerbResource is the apiserver_request_total delta keyed "VERB resource[/subresource]".
func requestsByVerbResource(before, after harness.Metrics) map[string]float64 {
	raw := deltaBy(before, after, "apiserver_request_total", nil, "verb", "resource", "subresource")
	out := map[string]float64{}
	for k, v := range raw {
		parts := strings.SplitN(k, " ", 3)
		key := parts[0] + " " + parts[1]
		if parts[2] != "" {
			key += "/" + parts[2]
		}
		out[key] += v
	}
	return out
}

// settleResult is the controller's activity after every Workload was Ready.
type settleResult struct {
	// Seconds is from the last Ready to the last request (leader election aside).
	Seconds  float64       `json:"seconds"`
	Requests requestCounts `json:"requests"`
	TimedOut bool          `json:"timedOut,omitempty"`
	// Events are the Events in the bench namespace once the controller is quiet, by
	// reason (each Event's count, so repeats folded into one object count too).
	Events map[string]float64 `json:"events"`
	// EventsFailed is the controller's count of Events it could not record.
	EventsFailed float64 `json:"eventsFailed"`
}

// settle waits until the controller and the stamping account have made no request
// (leader election aside) for two consecutive polls, so the at-rest window that
// follows really is at rest: events queued during convergence, for one, drain late.
func (e *env) settle(ctx context.Context, from snapshot) (*settleResult, snapshot, error) {
	const poll = 2 * time.Second
	prev, lastActive, quiet := from, from.at, 0
	deadline := time.Now().Add(e.opts.settleTimeout)
	for quiet < 2 {
		if time.Now().After(deadline) {
			return &settleResult{Seconds: lastActive.Sub(from.at).Seconds(), Requests: countRequests(from.apiserver, prev.apiserver), TimedOut: true}, prev, nil
		}
		select {
		case <-time.After(poll):
		case <-ctx.Done():
			return nil, prev, ctx.Err()
		}
		cur, err := e.snapshot(ctx)
		if err != nil {
			return nil, prev, err
		}
		if countRequests(prev.apiserver, cur.apiserver).all(false) > 0 {
			quiet, lastActive = 0, cur.at
		} else {
			quiet++
		}
		prev = cur
	}
	r := &settleResult{
		Seconds: lastActive.Sub(from.at).Seconds(), Requests: countRequests(from.apiserver, prev.apiserver),
		EventsFailed: prev.controller.Sum("surveyor_events_failed_total", nil),
	}
	var err error
	r.Events, err = e.countEvents(ctx)
	return r, prev, err
}

// countEvents sums the Events the controller recorded in the bench namespace by reason.
func (e *env) countEvents(ctx context.Context) (map[string]float64, error) {
	var events corev1.EventList
	if err := e.admin.List(ctx, &events, client.InNamespace(benchNamespace)); err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, ev := range events.Items {
		if ev.Source.Component != "surveyor" && ev.ReportingController != "surveyor" {
			continue // the API server's own, about Services, say
		}
		out[ev.Reason] += float64(max(ev.Count, 1))
	}
	return out, nil
}

// restResult is the controller's traffic while nothing changes.
type restResult struct {
	WindowSeconds float64       `json:"windowSeconds"`
	Requests      requestCounts `json:"requests"`
	// RequestsPerSecond and Writes leave leader election out; it is reported apart.
	RequestsPerSecond          float64 `json:"requestsPerSecond"`
	RequestsPerSecondWithLease float64 `json:"requestsPerSecondWithLease"`
	Writes                     float64 `json:"writes"`
	LeaseRequests              float64 `json:"leaseRequests"`
	ControllerCPUSeconds       float64 `json:"controllerCPUSeconds"`
	Reconciles                 float64 `json:"reconciles"`
}

func (e *env) atRest(ctx context.Context) (*restResult, error) {
	before, err := e.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	select {
	case <-time.After(e.opts.rest):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	after, err := e.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	window := after.at.Sub(before.at).Seconds()
	req := countRequests(before.apiserver, after.apiserver)
	r := &restResult{
		WindowSeconds:              window,
		Requests:                   req,
		RequestsPerSecond:          req.all(false) / window,
		RequestsPerSecondWithLease: req.all(true) / window,
		Writes:                     req.allWrites(),
		ControllerCPUSeconds:       (after.proc.CPU - before.proc.CPU).Seconds(),
		Reconciles: after.controller.Sum("controller_runtime_reconcile_total", map[string]string{"controller": "workload"}) -
			before.controller.Sum("controller_runtime_reconcile_total", map[string]string{"controller": "workload"}),
	}
	for id := range req {
		r.LeaseRequests += req[id][bucketLease]
	}
	return r, nil
}

// propagationResult is how long a health change of a stamped object takes to show
// in its Workload's ResourcesHealthy, as a watcher of the Workload sees it.
type propagationResult struct {
	K int `json:"k"`
	// ToUnhealthyMs and ToHealthyMs are the samples of each direction.
	ToUnhealthyMs []float64 `json:"toUnhealthyMs"`
	ToHealthyMs   []float64 `json:"toHealthyMs"`
	P50Ms         float64   `json:"p50Ms"`
	P99Ms         float64   `json:"p99Ms"`
	MaxMs         float64   `json:"maxMs"`
	Timeouts      int       `json:"timeouts"`
}

// propagate flips K source ConfigMaps, one at a time, unhealthy (data.health=bad,
// which the unhealthy matchFields rule reads and the template never sets) and back,
// timing each flip until the owner's ResourcesHealthy follows.
func (e *env) propagate(ctx context.Context, t *tracker, n int) (*propagationResult, error) {
	k := min(e.opts.k, n)
	r := &propagationResult{K: k}
	flip := func(name string, patch string, want metav1.ConditionStatus) (float64, error) {
		w := t.await(name, want)
		cm := &corev1.ConfigMap{}
		cm.Namespace, cm.Name = benchNamespace, name+"-source"
		start := time.Now()
		if err := e.admin.Patch(ctx, cm, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
			t.cancel(w)
			return 0, err
		}
		select {
		case at := <-w.seen:
			return float64(at.Sub(start).Microseconds()) / 1000, nil
		case <-time.After(30 * time.Second):
			t.cancel(w)
			r.Timeouts++
			return -1, nil
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	for i := range k {
		name := workloadName(i * n / k)
		if h := t.healthOf(name); h != metav1.ConditionTrue {
			return nil, fmt.Errorf("workload %s is not healthy before the probe (ResourcesHealthy=%s)", name, h)
		}
		ms, err := flip(name, `{"data":{"health":"bad"}}`, metav1.ConditionFalse)
		if err != nil {
			return nil, err
		}
		if ms >= 0 {
			r.ToUnhealthyMs = append(r.ToUnhealthyMs, ms)
		}
		if ms, err = flip(name, `{"data":{"health":null}}`, metav1.ConditionTrue); err != nil {
			return nil, err
		}
		if ms >= 0 {
			r.ToHealthyMs = append(r.ToHealthyMs, ms)
		}
	}
	all := append(append([]float64{}, r.ToUnhealthyMs...), r.ToHealthyMs...)
	r.P50Ms, r.P99Ms, r.MaxMs = percentile(all, 50), percentile(all, 99), percentile(all, 100)
	return r, nil
}

// isolationResult is what unrelated objects cost the controller.
type isolationResult struct {
	Objects       int     `json:"objects"`
	Labelled      bool    `json:"labelled,omitempty"`
	CreateSeconds float64 `json:"createSeconds"`
	RSSBeforeMiB  float64 `json:"rssBeforeMiB"`
	RSSAfterMiB   float64 `json:"rssAfterMiB"`
	RSSDeltaMiB   float64 `json:"rssDeltaMiB"`
	HeapBeforeMiB float64 `json:"heapInuseBeforeMiB"`
	HeapAfterMiB  float64 `json:"heapInuseAfterMiB"`
	// LiveHeapDeltaMiB is the change of the heap that is live (allocated after a
	// collection): heap in use counts garbage not yet collected too.
	LiveHeapDeltaMiB float64 `json:"liveHeapDeltaMiB"`
	// Requests the controller and stamper made meanwhile (leader election aside).
	Requests             float64 `json:"requests"`
	ControllerCPUSeconds float64 `json:"controllerCPUSeconds"`
}

// isolate creates unrelated ConfigMaps (1 KiB of data each, none of Surveyor's labels)
// in another namespace and compares the controller's memory before and after a settle.
// Its ConfigMap informer selects stamped objects only, so nothing should change. With
// -isolation-labelled they carry Surveyor's resource-name label, and the informer holds
// them, as stubs since no owner controls them (internal/transform/foreign.go).
func (e *env) isolate(ctx context.Context) (*isolationResult, error) {
	n := e.opts.isolation
	if err := e.admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: isolationNamespace}}); err != nil {
		return nil, err
	}
	before, err := e.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	liveBefore, err := e.liveHeap(ctx)
	if err != nil {
		return nil, err
	}
	cfg := rest.CopyConfig(e.Cluster.Config)
	cfg.QPS, cfg.Burst = 1000, 2000
	bulk, err := client.New(cfg, client.Options{Scheme: e.Scheme})
	if err != nil {
		return nil, err
	}
	payload := strings.Repeat("x", 1024)
	labels := map[string]string{"app": "unrelated"}
	if e.opts.isolationLabelled {
		labels[v1alpha1.LabelResourceName] = "planted"
	}
	start := time.Now()
	err = createParallel(ctx, n, 32, func(ctx context.Context, i int) error {
		return bulk.Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("unrelated-%05d", i), Namespace: isolationNamespace, Labels: labels},
			Data:       map[string]string{"payload": payload},
		})
	})
	if err != nil {
		return nil, fmt.Errorf("creating unrelated ConfigMaps: %w", err)
	}
	created := time.Since(start)
	select {
	case <-time.After(e.opts.isolationSettle):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	after, err := e.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	liveAfter, err := e.liveHeap(ctx)
	if err != nil {
		return nil, err
	}
	return &isolationResult{
		Objects: n, Labelled: e.opts.isolationLabelled, CreateSeconds: created.Seconds(),
		RSSBeforeMiB: float64(before.proc.RSS) / mib, RSSAfterMiB: float64(after.proc.RSS) / mib,
		RSSDeltaMiB:          (float64(after.proc.RSS) - float64(before.proc.RSS)) / mib,
		HeapBeforeMiB:        before.controller.Sum("go_memstats_heap_inuse_bytes", nil) / mib,
		HeapAfterMiB:         after.controller.Sum("go_memstats_heap_inuse_bytes", nil) / mib,
		Requests:             countRequests(before.apiserver, after.apiserver).all(false),
		ControllerCPUSeconds: (after.proc.CPU - before.proc.CPU).Seconds(),
		LiveHeapDeltaMiB:     (liveAfter - liveBefore) / mib,
	}, nil
}

// liveHeap is the controller's heap allocated right after a collection, in bytes: the
// heap profile endpoint collects first when asked (gc=1), and its text form ends with
// the runtime's MemStats.
func (e *env) liveHeap(ctx context.Context) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.controller.PprofURL+"/heap?gc=1&debug=1", nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "# HeapAlloc = "); ok {
			return strconv.ParseFloat(strings.TrimSpace(v), 64)
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("no HeapAlloc in %s/heap?debug=1", e.controller.PprofURL)
}
