package main

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// rolloutResult is what rolling a template change out to every Workload costs once the supply
// chain has a rolloutStrategy of type All (DESIGN §9): the target is at most one apply per
// stamped object the change alters plus one status write per Workload.
type rolloutResult struct {
	// EnableSeconds is how long the first revision took to reach every Workload after the
	// strategy was set, and EnableStatusWrites the Workload status writes that took.
	EnableSeconds      float64 `json:"enableSeconds"`
	EnableStatusWrites float64 `json:"enableStatusWrites"`
	// Seconds is from the template change until every Workload runs the new revision and
	// the rollout is complete.
	Seconds float64 `json:"seconds"`
	// ChangedObjects are the stamped objects the change alters: one ConfigMap per Workload.
	ChangedObjects int `json:"changedObjects"`
	// Applies are the ConfigMap applies (server-side apply is verb APPLY); StatusWrites the
	// Workload status writes, both from the change until the controller is quiet.
	Applies                 float64            `json:"applies"`
	StatusWrites            float64            `json:"statusWrites"`
	AppliesPerChangedObject float64            `json:"appliesPerChangedObject"`
	StatusWritesPerWorkload float64            `json:"statusWritesPerWorkload"`
	APIServerRequests       map[string]float64 `json:"apiserverRequests"`
}

// rollout sets rolloutStrategy {type: All} on the bench supply chain, waits until its first
// revision reached every Workload and the controller is quiet, then changes the config
// template (one ConfigMap per Workload changes) and counts the writes until the rollout is
// complete and the controller is quiet again.
func (e *env) rollout(ctx context.Context, n int) (*rolloutResult, error) {
	r := &rolloutResult{ChangedObjects: n}
	sc := &v1alpha1.ClusterSupplyChain{}
	sc.Name = "bench"
	before, err := e.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if err := e.admin.Patch(ctx, sc, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"rolloutStrategy":{"type":"All"}}}`))); err != nil {
		return nil, err
	}
	first, err := e.awaitRollout(ctx, n, "")
	if err != nil {
		return nil, err
	}
	r.EnableSeconds = time.Since(start).Seconds()
	_, quiet, err := e.settle(ctx, before)
	if err != nil {
		return nil, err
	}
	r.EnableStatusWrites = statusWrites(requestsByVerbResource(before.apiserver, quiet.apiserver))

	tpl := &v1alpha1.ClusterConfigTemplate{}
	tpl.Name = "bench-config"
	start = time.Now()
	patch := `{"spec":{"template":{"data":{"APP_ROLLED_OUT":"yes"}}}}`
	if err := e.admin.Patch(ctx, tpl, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		return nil, err
	}
	if _, err := e.awaitRollout(ctx, n, first); err != nil {
		return nil, err
	}
	r.Seconds = time.Since(start).Seconds()
	_, after, err := e.settle(ctx, quiet)
	if err != nil {
		return nil, err
	}
	r.APIServerRequests = requestsByVerbResource(quiet.apiserver, after.apiserver)
	r.Applies = r.APIServerRequests["APPLY configmaps"] + r.APIServerRequests["PATCH configmaps"]
	r.StatusWrites = statusWrites(r.APIServerRequests)
	r.AppliesPerChangedObject = r.Applies / float64(n)
	r.StatusWritesPerWorkload = r.StatusWrites / float64(n)
	return r, nil
}

// statusWrites are the Workload status writes among requests by "VERB resource".
func statusWrites(requests map[string]float64) float64 {
	return requests["PATCH workloads/status"] + requests["PUT workloads/status"]
}

// awaitRollout waits until the bench supply chain's rollout is complete at a target other
// than previous and every one of the n Workloads runs it, and returns the target.
func (e *env) awaitRollout(ctx context.Context, n int, previous string) (string, error) {
	var target, last string
	err := wait.PollUntilContextTimeout(ctx, time.Second, e.opts.timeout, true, func(ctx context.Context) (bool, error) {
		sc := &v1alpha1.ClusterSupplyChain{}
		if err := e.admin.Get(ctx, client.ObjectKey{Name: "bench"}, sc); err != nil {
			return false, err
		}
		ro := sc.Status.Rollout
		if ro == nil || ro.TargetRevision == "" || ro.TargetRevision == previous || !ro.Complete {
			last = fmt.Sprintf("supply chain rollout %+v", ro)
			return false, nil
		}
		target = ro.TargetRevision
		var list v1alpha1.WorkloadList
		if err := e.admin.List(ctx, &list, client.InNamespace(benchNamespace)); err != nil {
			return false, err
		}
		at := 0
		for _, w := range list.Items {
			if w.Status.BlueprintRevision == target {
				at++
			}
		}
		last = fmt.Sprintf("%d of %d Workloads at revision %s", at, n, target)
		return at == n, nil
	})
	if err != nil {
		return "", fmt.Errorf("waiting for the rollout (%s): %w", last, err)
	}
	return target, nil
}
