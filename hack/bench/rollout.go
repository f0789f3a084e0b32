package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/internal/harness"
	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// rolloutResult is what rolling a template change out to every Workload costs once the supply
// chain has a rolloutStrategy (DESIGN §9): the same kind of change, rolled out group by group
// and then to every Workload at once.
type rolloutResult struct {
	// EnableSeconds is how long the first revision took to reach every Workload after the
	// strategy (type All) was set, and EnableStatusWrites the Workload status writes that took.
	EnableSeconds      float64 `json:"enableSeconds"`
	EnableStatusWrites float64 `json:"enableStatusWrites"`
	// PerGroup is the change under type ProgressivePerGroup (nil with -rollout-groups 0), All
	// the next one under type All.
	PerGroup *rolloutChange `json:"perGroup,omitempty"`
	All      *rolloutChange `json:"all"`
}

// rolloutChange is one template change rolled out under one strategy. The targets: at most
// one apply per stamped object the change alters, one status write per Workload for its
// admission plus its health transitions, and none to a Workload not yet admitted.
type rolloutChange struct {
	// Type is the strategy's type, Groups its number of groups.
	Type   string `json:"type"`
	Groups int    `json:"groups,omitempty"`
	// SwitchStatusWrites are the Workload status writes that setting the strategy made before
	// the change; a strategy alone starts no rollout (a revision does not cover it).
	SwitchStatusWrites       float64            `json:"switchStatusWrites"`
	SwitchStatusWritesByCode map[string]float64 `json:"switchStatusWritesByCode"`
	// Target is the change's revision. Seconds is from the template change until the supply
	// chain's rollout is complete at Target and every Workload runs it.
	Target  string  `json:"target"`
	Seconds float64 `json:"seconds"`
	// ChangedObjects are the stamped objects the change alters: one ConfigMap per Workload.
	ChangedObjects int `json:"changedObjects"`
	// Applies are the ConfigMap applies (server-side apply is verb APPLY); StatusWrites the
	// Workload status writes, both from the change until the controller is quiet.
	Applies                 float64 `json:"applies"`
	StatusWrites            float64 `json:"statusWrites"`
	AppliesPerChangedObject float64 `json:"appliesPerChangedObject"`
	StatusWritesPerWorkload float64 `json:"statusWritesPerWorkload"`
	// StatusWritesByCode are the status writes by "VERB code" (a 409 is a write that lost to a
	// newer copy of the Workload and changed nothing), and SwitchStatusWritesByCode likewise.
	StatusWritesByCode map[string]float64 `json:"statusWritesByCode"`
	// EarlyWrites are the Workload status changes the harness's watch saw before the Workload
	// was admitted to Target (its rollout record not at Target, or ToApply there), and
	// EarlyWorkloads the Workloads that had one. WatchedStatusChanges are all the status
	// changes it saw, a check on StatusWrites (a write that changes nothing is not seen).
	EarlyWrites          int `json:"earlyWrites"`
	EarlyWorkloads       int `json:"earlyWorkloads"`
	WatchedStatusChanges int `json:"watchedStatusChanges"`
	// Requests are the controller's and the stamper's (FlowSchema counts), and
	// RequestsPerWorkload their sum, leader election aside, over the Workloads.
	Requests            requestCounts      `json:"requests"`
	RequestsPerWorkload float64            `json:"requestsPerWorkload"`
	APIServerRequests   map[string]float64 `json:"apiserverRequests"`
}

// rollout sets rolloutStrategy {type: All} on the bench supply chain and waits until its
// first revision reached every Workload and the controller is quiet. Then, unless
// -rollout-groups is 0, it switches to ProgressivePerGroup over that many groups
// (minSuccessTime 0s) and rolls a template change out; then it switches back to All and
// rolls another change out.
func (e *env) rollout(ctx context.Context, t *tracker, n int) (*rolloutResult, error) {
	r := &rolloutResult{}
	before, err := e.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	all := v1alpha1.RolloutStrategy{Type: v1alpha1.RolloutAll}
	start := time.Now()
	if err := e.setStrategy(ctx, all); err != nil {
		return nil, err
	}
	target, err := e.awaitRollout(ctx, t, n, "")
	if err != nil {
		return nil, err
	}
	r.EnableSeconds = time.Since(start).Seconds()
	_, quiet, err := e.settle(ctx, before)
	if err != nil {
		return nil, err
	}
	r.EnableStatusWrites = statusWrites(requestsByVerbResource(before.apiserver, quiet.apiserver))

	if groups := e.opts.rolloutGroups; groups > 0 {
		e.logf("rollout: ProgressivePerGroup over %d groups, then a template change", groups)
		s := v1alpha1.RolloutStrategy{Type: v1alpha1.RolloutProgressivePerGroup, MinSuccessTime: &metav1.Duration{}}
		for i := range groups {
			name := groupOf(i, groups)
			s.Groups = append(s.Groups, v1alpha1.RolloutGroup{Name: name, Selector: metav1.LabelSelector{MatchLabels: map[string]string{groupLabel: name}}})
		}
		if r.PerGroup, quiet, err = e.change(ctx, t, n, s, "per-group", target, quiet); err != nil {
			return nil, err
		}
		target = r.PerGroup.Target
		e.logf("rollout: ProgressivePerGroup in %.1f s", r.PerGroup.Seconds)
	}
	e.logf("rollout: type All, then a template change")
	if r.All, _, err = e.change(ctx, t, n, all, "all", target, quiet); err != nil {
		return nil, err
	}
	return r, nil
}

// change sets strategy s on the bench supply chain and waits until the controller is quiet
// again; then it sets data.APP_ROLLED_OUT of the config template to value, which alters one
// ConfigMap per Workload, and measures the rollout from revision previous to the new one until
// the controller is quiet. from is the last quiet snapshot; change returns its own.
func (e *env) change(ctx context.Context, t *tracker, n int, s v1alpha1.RolloutStrategy, value, previous string, from snapshot) (*rolloutChange, snapshot, error) {
	c := &rolloutChange{Type: string(s.Type), Groups: len(s.Groups), ChangedObjects: n}
	if err := e.setStrategy(ctx, s); err != nil {
		return nil, from, err
	}
	_, quiet, err := e.settle(ctx, from)
	if err != nil {
		return nil, from, err
	}
	c.SwitchStatusWrites = statusWrites(requestsByVerbResource(from.apiserver, quiet.apiserver))
	c.SwitchStatusWritesByCode = statusWritesByCode(from.apiserver, quiet.apiserver)

	t.record()
	defer t.stopRecording()
	tpl := &v1alpha1.ClusterConfigTemplate{}
	tpl.Name = "bench-config"
	patch := fmt.Sprintf(`{"spec":{"template":{"data":{"APP_ROLLED_OUT":%q}}}}`, value)
	if e.opts.ytt {
		// The ytt config template's last lines are its data: one more key goes there.
		if err := e.admin.Get(ctx, client.ObjectKeyFromObject(tpl), tpl); err != nil {
			return nil, quiet, err
		}
		body, _, _ := strings.Cut(tpl.Spec.Ytt, "  APP_ROLLED_OUT: ")
		b, err := json.Marshal(map[string]any{"spec": map[string]any{"ytt": fmt.Sprintf("%s  APP_ROLLED_OUT: %q\n", body, value)}})
		if err != nil {
			return nil, quiet, err
		}
		patch = string(b)
	}
	start := time.Now()
	if err := e.admin.Patch(ctx, tpl, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		return nil, quiet, err
	}
	if c.Target, err = e.awaitRollout(ctx, t, n, previous); err != nil {
		return nil, quiet, err
	}
	c.Seconds = time.Since(start).Seconds()
	_, after, err := e.settle(ctx, quiet)
	if err != nil {
		return nil, quiet, err
	}
	c.EarlyWrites, c.EarlyWorkloads, c.WatchedStatusChanges = earlyWrites(t.stopRecording(), c.Target)
	c.Requests = countRequests(quiet.apiserver, after.apiserver)
	c.RequestsPerWorkload = c.Requests.all(false) / float64(n)
	c.APIServerRequests = requestsByVerbResource(quiet.apiserver, after.apiserver)
	c.Applies = c.APIServerRequests["APPLY configmaps"] + c.APIServerRequests["PATCH configmaps"]
	c.StatusWrites = statusWrites(c.APIServerRequests)
	c.StatusWritesByCode = statusWritesByCode(quiet.apiserver, after.apiserver)
	c.AppliesPerChangedObject = c.Applies / float64(n)
	c.StatusWritesPerWorkload = c.StatusWrites / float64(n)
	return c, after, nil
}

// statusWritesByCode are the Workload status writes between two scrapes by "VERB code".
func statusWritesByCode(before, after harness.Metrics) map[string]float64 {
	return deltaBy(before, after, "apiserver_request_total", map[string]string{"resource": "workloads", "subresource": "status"}, "verb", "code")
}

// earlyWrites counts, among the status changes marks recorded, those that left a Workload not
// admitted to target (its rollout record at another revision, or ToApply at target), and the
// Workloads that had one, and all the changes.
func earlyWrites(marks map[string][]rolloutMark, target string) (writes, workloads, all int) {
	for _, ms := range marks {
		early := 0
		for _, m := range ms {
			if m.revision != target || m.state == v1alpha1.RolloutToApply {
				early++
			}
		}
		writes += early
		all += len(ms)
		if early > 0 {
			workloads++
		}
	}
	return writes, workloads, all
}

// setStrategy replaces the bench supply chain's rolloutStrategy with s and waits until the
// controller has observed the new spec.
func (e *env) setStrategy(ctx context.Context, s v1alpha1.RolloutStrategy) error {
	value, err := json.Marshal(s)
	if err != nil {
		return err
	}
	sc := &v1alpha1.ClusterSupplyChain{}
	sc.Name = "bench"
	// A JSON patch's add replaces the whole strategy; a merge patch would keep the fields s
	// leaves out (the groups, when switching back to All).
	patch := fmt.Sprintf(`[{"op":"add","path":"/spec/rolloutStrategy","value":%s}]`, value)
	if err := e.admin.Patch(ctx, sc, client.RawPatch(types.JSONPatchType, []byte(patch))); err != nil {
		return fmt.Errorf("setting the rollout strategy: %w", err)
	}
	gen := sc.Generation
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := e.admin.Get(ctx, client.ObjectKeyFromObject(sc), sc); err != nil {
			return false, err
		}
		return sc.Status.ObservedGeneration >= gen, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the controller to observe the rollout strategy: %w", err)
	}
	return nil
}

// statusWrites are the Workload status writes among requests by "VERB resource".
func statusWrites(requests map[string]float64) float64 {
	return requests["PATCH workloads/status"] + requests["PUT workloads/status"]
}

// awaitRollout waits until the bench supply chain's rollout is complete at a target other
// than previous and the watch has seen every one of the n Workloads run it, and returns the
// target. It reads the supply chain every 250 ms and the Workloads from the watch: listing
// 10,000 Workloads every poll would weigh on the API server it measures.
func (e *env) awaitRollout(ctx context.Context, t *tracker, n int, previous string) (string, error) {
	var target, last string
	start, logged := time.Now(), time.Now()
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, e.opts.timeout, true, func(ctx context.Context) (bool, error) {
		if err := e.controllerAlive(); err != nil {
			return false, err
		}
		if time.Since(logged) >= 10*time.Second {
			e.logf("  rollout: %s after %s", last, time.Since(start).Round(time.Second))
			logged = time.Now()
		}
		sc := &v1alpha1.ClusterSupplyChain{}
		if err := e.admin.Get(ctx, client.ObjectKey{Name: "bench"}, sc); err != nil {
			return false, err
		}
		ro := sc.Status.Rollout
		if ro == nil || ro.TargetRevision == "" || ro.TargetRevision == previous || !ro.Complete {
			last = "supply chain rollout not complete at a new revision"
			if ro != nil {
				last = fmt.Sprintf("target %q (complete %v), group %q, %+v", ro.TargetRevision, ro.Complete, ro.CurrentGroup, ro.Counts)
			}
			return false, nil
		}
		target = ro.TargetRevision
		at := t.countAt(target)
		last = fmt.Sprintf("%d of %d Workloads at revision %s", at, n, target)
		return at == n, nil
	})
	if err != nil {
		return "", fmt.Errorf("waiting for the rollout (%s): %w", last, err)
	}
	return target, nil
}
