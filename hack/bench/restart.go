package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/surveyor-dev/surveyor/internal/harness"
	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// The restart phase (DESIGN §12, Kinds): "A controller restart with tens of thousands of
// stamped objects writes nothing and flaps no status while caches fill." With N Ready
// Workloads and the controller quiet, the controller is killed and started again with the
// same flags; the phase counts what the new process writes and what a watcher of the
// Workloads sees change, and times the new process until every Workload was reconciled.

func init() {
	// The phase reads the controller's work queue and its leadership besides the families
	// every phase reads; adding them here keeps env.go, which other changes touch, as it is.
	controllerMetrics = append(controllerMetrics, "workqueue_depth", "leader_election_master_status")
}

// restartResult is what a controller restart with N Ready Workloads costs.
type restartResult struct {
	// Signal is how the old process was stopped: KILL (a crash, an OOM kill, a node loss:
	// its leader-election lease stays held until it expires) or TERM (a rolling update:
	// it releases the lease as it exits).
	Signal string `json:"signal"`
	// ReadySeconds, LeaderSeconds and ReconciledSeconds count from the new process's
	// start: until it answered /readyz, until it held the leader-election lease (absent
	// without leader election) and until every Workload was reconciled once (see
	// restart). ReconciledAfterLeaderSeconds is the last less the lease wait: the
	// controller's own part, as it would be after a rolling update.
	ReadySeconds                 float64 `json:"readySeconds"`
	LeaderSeconds                float64 `json:"leaderSeconds,omitempty"`
	ReconciledSeconds            float64 `json:"reconciledSeconds"`
	ReconciledAfterLeaderSeconds float64 `json:"reconciledAfterLeaderSeconds"`
	// QuietSeconds is from the start until the last poll that saw the new process make a
	// request or reconcile; QuietTimedOut is set when it had not stopped by -settle-timeout.
	QuietSeconds  float64 `json:"quietSeconds"`
	QuietTimedOut bool    `json:"quietTimedOut,omitempty"`
	// Reconciles are the new process's Workload reconciles by result once it was quiet:
	// requeue_after are owners that met a stamped kind still listing (errKindSyncing) and
	// were deferred, writing nothing.
	Reconciles map[string]float64 `json:"reconciles"`
	// Requests are the controller's and the stamper's from the kill until quiet (FlowSchema
	// counts), Writes their creates, updates, patches and deletes (leader election aside:
	// the lease is renewed whatever the controller does), and WritesByVerbResource the
	// API server's count of writes by "VERB resource" from every client but leases (the
	// control plane's own writes included, so a check on Writes, not the figure).
	//
	// A new leader records one Event about itself on its lease (client-go's leader
	// election does, reason LeaderElection), a write by the controller's identity
	// that is leader election, not realization: Writes leaves those out, as it leaves
	// the lease out, and WritesWithLeaderElection keeps them. EventsSince are the
	// Events created or repeated since the start, by "namespace reason", so that any
	// write Writes does count can be told apart.
	Requests                 requestCounts      `json:"requests"`
	Writes                   float64            `json:"writes"`
	WritesWithLeaderElection float64            `json:"writesWithLeaderElection"`
	LeaderElectionEvents     float64            `json:"leaderElectionEvents"`
	EventsSince              map[string]float64 `json:"eventsSince"`
	WritesByVerbResource     map[string]float64 `json:"writesByVerbResource"`
	// Transitions are the Workload condition transitions and rollout record changes the
	// harness's watch saw from the kill until quiet (see statusTransitions), by what
	// changed; StatusChanges every status change it saw, transition or not (a message, a
	// resource's outputs), and WorkloadsChanged the Workloads that had one.
	Transitions      int            `json:"transitions"`
	TransitionsBy    map[string]int `json:"transitionsBy,omitempty"`
	StatusChanges    int            `json:"statusChanges"`
	WorkloadsChanged int            `json:"workloadsChanged"`
	// ControllerCPUSeconds and PeakRSSMiB are the new process's, from its start until quiet.
	ControllerCPUSeconds float64 `json:"controllerCPUSeconds"`
	PeakRSSMiB           float64 `json:"peakRSSMiB"`
}

// restart stops the controller with the -restart-signal, starts it again with the same
// binary and flags, and measures until it is quiet. Every Workload was reconciled once by
// the new process when its successful Workload reconciles reach n and its Workload queue is
// empty: the Workload informer's first list queues every Workload before any worker starts,
// so an empty queue means each was taken, while the count alone could be reached early by
// an owner reconciled twice (its stamped objects' first list queues it again). Deferred
// owners (a kind still listing) count once their later reconcile succeeds.
func (e *env) restart(ctx context.Context, t *tracker, n int) (*restartResult, error) {
	r := &restartResult{Signal: e.opts.restartSignal}
	before, err := e.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	log := t.recordTransitions()
	defer t.stopTransitions()
	switch e.opts.restartSignal {
	case "KILL":
		err = e.Cluster.Kill(e.controller.Name)
	case "TERM":
		err = e.Cluster.Terminate(e.controller.Name)
	default:
		err = fmt.Errorf("-restart-signal %q is neither KILL nor TERM", e.opts.restartSignal)
	}
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if err := e.Cluster.Relaunch(ctx, e.controller.Name); err != nil {
		return nil, fmt.Errorf("starting the controller again: %w", err)
	}

	// Poll fast until every Workload was reconciled: the figures are times, and a scrape
	// of the controller's few families is cheap. /readyz first, since the metrics
	// endpoint may not listen before it.
	var ready, leader, reconciled time.Time
	deadline := time.Now().Add(e.opts.timeout)
	progress := time.Now()
	for reconciled.IsZero() {
		select {
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if err := e.controllerAlive(); err != nil {
			return nil, err
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the restarted controller had not reconciled every Workload after %s (log: %s)", e.opts.timeout, e.controller.LogPath())
		}
		if ready.IsZero() {
			if !e.controller.Ready(ctx) {
				continue
			}
			ready = time.Now()
		}
		m, err := e.scrapeController(ctx)
		if err != nil {
			continue // a scrape that races the process's start; the next one will do
		}
		at := time.Now()
		if leader.IsZero() && m.Sum("leader_election_master_status", nil) >= 1 {
			leader = at
		}
		done := m.Sum("controller_runtime_reconcile_total", map[string]string{"controller": "workload", "result": "success"})
		depth := m.Sum("workqueue_depth", map[string]string{"name": "workload"})
		if done >= float64(n) && depth == 0 {
			reconciled = at
		}
		if time.Since(progress) >= 10*time.Second {
			e.logf("  restart: %.0f of %d Workloads reconciled, %.0f queued, after %s", done, n, depth, time.Since(start).Round(time.Second))
			progress = time.Now()
		}
	}
	r.ReadySeconds = ready.Sub(start).Seconds()
	r.ReconciledSeconds = reconciled.Sub(start).Seconds()
	r.ReconciledAfterLeaderSeconds = r.ReconciledSeconds
	if !leader.IsZero() {
		r.LeaderSeconds = leader.Sub(start).Seconds()
		r.ReconciledAfterLeaderSeconds = reconciled.Sub(leader).Seconds()
	}

	// Then until quiet: a deferred owner, an event or a late status write would come now,
	// and the writes and transitions count until then.
	after, lastActive, timedOut, err := e.quietAfterRestart(ctx)
	if err != nil {
		return nil, err
	}
	r.QuietSeconds, r.QuietTimedOut = lastActive.Sub(start).Seconds(), timedOut
	if r.QuietSeconds < r.ReconciledSeconds {
		r.QuietSeconds = r.ReconciledSeconds
	}
	r.Reconciles = after.controller.By("controller_runtime_reconcile_total", map[string]string{"controller": "workload"}, "result")
	r.Requests = countRequests(before.apiserver, after.apiserver)
	r.WritesWithLeaderElection = r.Requests.allWrites()
	if r.EventsSince, err = e.eventsSince(ctx, start); err != nil {
		return nil, err
	}
	r.LeaderElectionEvents = r.EventsSince[harness.ControllerNamespace+" LeaderElection"]
	r.Writes = max(r.WritesWithLeaderElection-r.LeaderElectionEvents, 0)
	r.WritesByVerbResource = writesOf(requestsByVerbResource(before.apiserver, after.apiserver))
	r.ControllerCPUSeconds = after.proc.CPU.Seconds()
	r.PeakRSSMiB = float64(after.proc.HWM) / mib
	log.mu.Lock()
	r.Transitions, r.TransitionsBy = log.total(), log.by
	r.StatusChanges, r.WorkloadsChanged = log.changes, len(log.changed)
	log.mu.Unlock()
	return r, nil
}

// quietAfterRestart polls every 2 s until two polls in a row saw no request from the
// controller or the stamper (leader election aside), no new Workload reconcile and an
// empty Workload queue, or -settle-timeout passes. It returns the last snapshot, the time
// of the last poll that saw activity and whether it timed out. Two quiet polls leave the
// harness's watch seconds to deliver any status change the last writes made.
func (e *env) quietAfterRestart(ctx context.Context) (snapshot, time.Time, bool, error) {
	const poll = 2 * time.Second
	prev, err := e.snapshot(ctx)
	if err != nil {
		return prev, time.Time{}, false, err
	}
	lastActive, quiet := prev.at, 0
	deadline := time.Now().Add(e.opts.settleTimeout)
	reconciles := func(s snapshot) float64 {
		return s.controller.Sum("controller_runtime_reconcile_total", map[string]string{"controller": "workload"})
	}
	for quiet < 2 {
		if time.Now().After(deadline) {
			return prev, lastActive, true, nil
		}
		select {
		case <-time.After(poll):
		case <-ctx.Done():
			return prev, lastActive, false, ctx.Err()
		}
		cur, err := e.snapshot(ctx)
		if err != nil {
			return prev, lastActive, false, err
		}
		if countRequests(prev.apiserver, cur.apiserver).all(false) > 0 || reconciles(cur) != reconciles(prev) ||
			cur.controller.Sum("workqueue_depth", map[string]string{"name": "workload"}) > 0 {
			quiet, lastActive = 0, cur.at
		} else {
			quiet++
		}
		prev = cur
	}
	return prev, lastActive, false, nil
}

// eventsSince counts the Events of every namespace first or last recorded at or after
// since, by "namespace reason". Event times have whole seconds, so since is rounded down:
// the restart phase's old process recorded its own Events long before.
func (e *env) eventsSince(ctx context.Context, since time.Time) (map[string]float64, error) {
	var events corev1.EventList
	if err := e.admin.List(ctx, &events); err != nil {
		return nil, err
	}
	from := since.Truncate(time.Second)
	out := map[string]float64{}
	for _, ev := range events.Items {
		at := ev.LastTimestamp.Time
		if ev.EventTime.After(at) {
			at = ev.EventTime.Time
		}
		if ev.CreationTimestamp.After(at) {
			at = ev.CreationTimestamp.Time
		}
		if !at.Before(from) {
			out[ev.Namespace+" "+ev.Reason]++
		}
	}
	return out, nil
}

// writesOf keeps the writes among requests by "VERB resource", leases aside: every
// component of the control plane renews its own lease every few seconds.
func writesOf(requests map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range requests {
		verb, resource, _ := strings.Cut(k, " ")
		switch verb {
		case "POST", "PUT", "PATCH", "DELETE", "DELETECOLLECTION", "APPLY":
		default:
			continue
		}
		if resource == "leases" || v == 0 {
			continue
		}
		out[k] = v
	}
	return out
}

// transitionLog accumulates the status transitions the tracker's watch sees while the
// restart phase records them.
type transitionLog struct {
	mu sync.Mutex
	// by counts transitions by what changed (see statusTransitions).
	by map[string]int
	// changes counts status changes of any kind, changed the Workloads that had one.
	changes int
	changed map[string]bool
}

// add takes in one watch update of Workload name from old to cur.
func (l *transitionLog) add(name string, old, cur *v1alpha1.WorkloadStatus) {
	if equality.Semantic.DeepEqual(old, cur) {
		return // a resync or a metadata change: nothing in the status moved
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.changes++
	l.changed[name] = true
	for _, what := range statusTransitions(old, cur) {
		l.by[what]++
	}
}

// total is the number of transitions recorded.
func (l *transitionLog) total() int {
	t := 0
	for _, v := range l.by {
		t += v
	}
	return t
}

// statusTransitions lists what moved between two statuses of one Workload, one entry per
// transition: "Ready" for an owner condition, "resource <name> Healthy" for a resource's
// condition, "rollout" for the rollout record. A condition transitions when it appears,
// disappears, or its status, reason or lastTransitionTime changes; a message or
// observedGeneration alone is not a transition (a watcher waiting for Ready would not
// notice it). The rollout record counts when anything in it changes: its state, its
// revision and its times are what a rollout admits and soaks by.
func statusTransitions(old, cur *v1alpha1.WorkloadStatus) []string {
	out := conditionsChanged(old.Conditions, cur.Conditions)
	oldRes := map[string][]metav1.Condition{}
	for _, rs := range old.Resources {
		oldRes[rs.Name] = rs.Conditions
	}
	seen := map[string]bool{}
	for _, rs := range cur.Resources {
		seen[rs.Name] = true
		for _, typ := range conditionsChanged(oldRes[rs.Name], rs.Conditions) {
			out = append(out, "resource "+rs.Name+" "+typ)
		}
	}
	for _, rs := range old.Resources {
		if !seen[rs.Name] {
			for _, typ := range conditionsChanged(rs.Conditions, nil) {
				out = append(out, "resource "+rs.Name+" "+typ)
			}
		}
	}
	if !equality.Semantic.DeepEqual(old.Rollout, cur.Rollout) {
		out = append(out, "rollout")
	}
	return out
}

// conditionsChanged are the types of the conditions that transitioned between two lists,
// sorted.
func conditionsChanged(old, cur []metav1.Condition) []string {
	was := map[string]metav1.Condition{}
	for _, c := range old {
		was[c.Type] = c
	}
	var out []string
	for _, c := range cur {
		o, ok := was[c.Type]
		delete(was, c.Type)
		if !ok || o.Status != c.Status || o.Reason != c.Reason || !o.LastTransitionTime.Equal(&c.LastTransitionTime) {
			out = append(out, c.Type)
		}
	}
	for typ := range was {
		out = append(out, typ) // gone
	}
	sort.Strings(out)
	return out
}

// recordTransitions starts recording the Workloads' status transitions into a new log,
// which it returns.
func (t *tracker) recordTransitions() *transitionLog {
	l := &transitionLog{by: map[string]int{}, changed: map[string]bool{}}
	t.mu.Lock()
	t.transitions = l
	t.mu.Unlock()
	return l
}

// stopTransitions stops recording them.
func (t *tracker) stopTransitions() {
	t.mu.Lock()
	t.transitions = nil
	t.mu.Unlock()
}

// restartFigures are the restart phase's figures (none when it was skipped). The issue's
// figure is the first three: 0 writes, 0 transitions, and the time until every Workload
// was reconciled once.
func restartFigures() []figureDef {
	return []figureDef{
		{key: "restartWrites", label: "Restart: writes by the new controller (status, objects, events; leader election aside)", target: "0",
			value: restartValue(func(r *restartResult) float64 { return r.Writes }),
			met:   func(v float64) bool { return v == 0 }},
		{key: "restartLeaderElectionEvents", label: "  the new leader's own LeaderElection Event (left out above, as the lease is)",
			value: restartValue(func(r *restartResult) float64 { return r.LeaderElectionEvents })},
		{key: "restartTransitions", label: "  Workload condition transitions and rollout record changes (watched)", target: "0",
			value: restartValue(func(r *restartResult) float64 { return float64(r.Transitions) }),
			met:   func(v float64) bool { return v == 0 }},
		{key: "restartReconciled", label: "  start → every Workload reconciled once", unit: "s",
			value: restartValue(func(r *restartResult) float64 { return r.ReconciledSeconds })},
		{key: "restartReconciledAfterLeader", label: "    of it after taking the leader-election lease", unit: "s",
			value: restartValue(func(r *restartResult) float64 { return r.ReconciledAfterLeaderSeconds })},
		{key: "restartLeader", label: "  start → leader-election lease held (after a SIGKILL, once the old lease expired)", unit: "s",
			value: func(r *runResult) (float64, bool) {
				if r.Restart == nil || r.Restart.LeaderSeconds == 0 {
					return 0, false
				}
				return r.Restart.LeaderSeconds, true
			}},
		// /readyz is polled every 100 ms once Launch returns, which is 300 ms after the
		// start (its check for a process that exits at once): 0.4 s is the resolution.
		{key: "restartReady", label: "  start → /readyz (resolution 0.4 s)", unit: "s",
			value: restartValue(func(r *restartResult) float64 { return r.ReadySeconds })},
		{key: "restartDeferred", label: "  reconciles deferred for a kind still listing (requeue_after)",
			value: restartValue(func(r *restartResult) float64 { return r.Reconciles["requeue_after"] })},
		{key: "restartCPU", label: "  controller CPU, start → quiet", unit: "s",
			value: restartValue(func(r *restartResult) float64 { return r.ControllerCPUSeconds })},
		{key: "restartPeakRSS", label: "  controller peak RSS after the restart", unit: "MiB",
			value: restartValue(func(r *restartResult) float64 { return r.PeakRSSMiB })},
	}
}

// restartValue reads a figure of the restart phase, absent when it was skipped.
func restartValue(v func(*restartResult) float64) func(*runResult) (float64, bool) {
	return func(r *runResult) (float64, bool) {
		if r.Restart == nil {
			return 0, false
		}
		return v(r.Restart), true
	}
}

// formatIntCounts is formatCounts for counts kept as ints.
func formatIntCounts(m map[string]int) string {
	f := make(map[string]float64, len(m))
	for k, v := range m {
		f[k] = float64(v)
	}
	return formatCounts(f)
}
