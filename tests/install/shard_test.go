package install

import (
	"fmt"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/internal/harness"
	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// shardWorkloads is how many Workloads each of the two shards has, and how many have no
// shard label (and so no controller here).
const shardWorkloads = 10

// Two replicas started with --watch-label-selector each realize the Workloads of their
// shard and nothing else (DESIGN §13, Sharding): each caches only its shard's owners; the
// objects stamped for a Workload carry its shard; each shard holds a lease of its own and
// one of them the cluster-wide lease; Workloads of no shard here stay untouched; and a
// Workload moved to the other shard is realized there, its objects following it (same
// uids). A Progressive rollout then spans both shards: the replica holding the cluster-wide
// lease decides over the Workloads of both, never more than its maxConcurrency in flight,
// and every Workload of both ends at the new revision.
func TestShardsRealizeTheirOwnersAlone(t *testing.T) {
	const chain = "sharded"
	ns := env.StamperNamespace(ctx, t, k8s, "shards", "stamper")
	env.CreateAll(ctx, t, harness.ConfigMapChain(t, chain, `"mode": "sharded"`)...)
	shards := []string{"shard1", "shard2", ""}
	for _, shard := range shards {
		for i := range shardWorkloads {
			labels := map[string]string{harness.CaseLabel: chain}
			name := fmt.Sprintf("none-%02d", i)
			if shard != "" {
				labels[v1alpha1.LabelShardKey] = shard
				name = fmt.Sprintf("%s-%02d", shard, i)
			}
			env.CreateAll(ctx, t, &v1alpha1.Workload{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
				Spec: v1alpha1.WorkloadSpec{
					ServiceAccountName: "stamper",
					Source:             &v1alpha1.Source{Git: &v1alpha1.GitSource{URL: "https://example.com/" + name + ".git"}},
				},
			})
		}
	}
	controllers := map[string]*harness.Controller{}
	for _, shard := range shards[:2] {
		controllers[shard] = env.LaunchForTest(ctx, t, harness.Process{Name: "surveyor-" + shard, Metrics: true,
			Args: []string{"--watch-label-selector=" + v1alpha1.LabelShardKey + " in (" + shard + ")"}})
	}

	env.Eventually(ctx, t, 2*time.Minute, func() (bool, string) {
		ready := shardReadiness(t, ns)
		return ready["shard1"] == shardWorkloads && ready["shard2"] == shardWorkloads,
			fmt.Sprintf("Ready Workloads by shard: %v (want %d in each)", ready, shardWorkloads)
	})
	// Each replica's cache holds its shard's Workloads alone.
	for _, c := range controllers {
		families, err := c.Metrics(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := families.Sum("surveyor_owners", map[string]string{"kind": "Workload"}); got != shardWorkloads {
			t.Errorf("%s counts %v Workloads in its cache, want its shard's %d", c.Name, got, shardWorkloads)
		}
	}
	// The Workloads of no shard here were never reconciled.
	var list v1alpha1.WorkloadList
	if err := k8s.List(ctx, &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, wl := range list.Items {
		if wl.Labels[v1alpha1.LabelShardKey] == "" && (len(wl.Status.Conditions) > 0 || wl.Status.ObservedGeneration != 0) {
			t.Errorf("Workload %s, of no shard, has a status: %+v", wl.Name, wl.Status.Conditions)
		}
	}
	// Stamped objects carry their Workload's shard.
	var cms corev1.ConfigMapList
	if err := k8s.List(ctx, &cms, client.InNamespace(ns), client.HasLabels{v1alpha1.LabelResourceName}); err != nil {
		t.Fatal(err)
	}
	if got, want := len(cms.Items), 2*2*shardWorkloads; got != want {
		t.Errorf("%d stamped ConfigMaps, want %d", got, want)
	}
	for _, cm := range cms.Items {
		if got, want := cm.Labels[v1alpha1.LabelShardKey], shardOf(cm.Labels[v1alpha1.LabelWorkloadName]); got != want {
			t.Errorf("ConfigMap %s has shard %q, want its Workload's %q", cm.Name, got, want)
		}
	}
	// A lease per shard, held by its replica, and the cluster-wide one held by one of them.
	var leases coordinationv1.LeaseList
	if err := k8s.List(ctx, &leases, client.InNamespace(harness.ControllerNamespace)); err != nil {
		t.Fatal(err)
	}
	holders := map[string]string{}
	for _, l := range leases.Items {
		if l.Spec.HolderIdentity != nil {
			holders[l.Name] = *l.Spec.HolderIdentity
		}
	}
	shardLeases := 0
	for name := range holders {
		if strings.HasPrefix(name, harness.LeaseName+"-shard-") {
			shardLeases++
		}
	}
	if shardLeases != 2 || holders[harness.LeaseName] == "" {
		t.Errorf("leases held: %v; want two shard leases and %s", holders, harness.LeaseName)
	}

	// shard1-00 moves to shard2: shard2's replica realizes it, and its objects follow it.
	uids := map[string]types.UID{}
	for _, cm := range cms.Items {
		uids[cm.Name] = cm.UID
	}
	var moved v1alpha1.Workload
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "shard1-00"}, &moved); err != nil {
		t.Fatal(err)
	}
	moved.Labels[v1alpha1.LabelShardKey] = "shard2"
	moved.Spec.Source.Git.URL = "https://example.com/moved.git"
	if err := k8s.Update(ctx, &moved); err != nil {
		t.Fatal(err)
	}
	env.Eventually(ctx, t, time.Minute, func() (bool, string) {
		if err := k8s.List(ctx, &cms, client.InNamespace(ns), client.MatchingLabels{v1alpha1.LabelWorkloadName: "shard1-00"}); err != nil {
			return false, err.Error()
		}
		for _, cm := range cms.Items {
			if cm.Labels[v1alpha1.LabelShardKey] != "shard2" || (cm.Data["config"]+cm.Data["source"]) != "https://example.com/moved.git" {
				return false, fmt.Sprintf("ConfigMap %s: shard %q, data %v", cm.Name, cm.Labels[v1alpha1.LabelShardKey], cm.Data)
			}
			if cm.UID != uids[cm.Name] {
				return false, fmt.Sprintf("ConfigMap %s was recreated", cm.Name)
			}
		}
		ready := shardReadiness(t, ns)
		return len(cms.Items) == 2 && ready["shard2"] == shardWorkloads+1, fmt.Sprintf("%d ConfigMaps; Ready by shard %v", len(cms.Items), ready)
	})

	// A rollout over both shards' Workloads.
	var sc v1alpha1.ClusterSupplyChain
	if err := k8s.Get(ctx, client.ObjectKey{Name: chain}, &sc); err != nil {
		t.Fatal(err)
	}
	limit := intstr.FromInt32(4)
	sc.Spec.RolloutStrategy = &v1alpha1.RolloutStrategy{Type: v1alpha1.RolloutProgressive, MaxConcurrency: &limit}
	if err := k8s.Update(ctx, &sc); err != nil {
		t.Fatal(err)
	}
	realized := 2 * shardWorkloads
	first := waitRolloutComplete(t, chain, "", realized)
	var tpl v1alpha1.ClusterTemplate
	if err := k8s.Get(ctx, client.ObjectKey{Name: chain + "-app"}, &tpl); err != nil {
		t.Fatal(err)
	}
	tpl.Spec.Template = harness.ConfigMapApp(t, `"mode": "sharded-v2"`)
	if err := k8s.Update(ctx, &tpl); err != nil {
		t.Fatal(err)
	}
	waitRolloutComplete(t, chain, first, realized)
	if err := k8s.List(ctx, &cms, client.InNamespace(ns), client.MatchingLabels{v1alpha1.LabelResourceName: "app"}); err != nil {
		t.Fatal(err)
	}
	for _, cm := range cms.Items {
		if cm.Data["mode"] != "sharded-v2" {
			t.Errorf("ConfigMap %s (shard %q) has mode %q after the rollout, want sharded-v2", cm.Name, cm.Labels[v1alpha1.LabelShardKey], cm.Data["mode"])
		}
	}
}

// waitRolloutComplete waits until the supply chain's rollout to a revision other than
// previous is complete with owners Workloads Succeeded, and returns that revision.
func waitRolloutComplete(t *testing.T, chain, previous string, owners int) string {
	t.Helper()
	var target string
	env.Eventually(ctx, t, 2*time.Minute, func() (bool, string) {
		var sc v1alpha1.ClusterSupplyChain
		if err := k8s.Get(ctx, client.ObjectKey{Name: chain}, &sc); err != nil {
			return false, err.Error()
		}
		r := sc.Status.Rollout
		if r == nil {
			return false, "no rollout status yet"
		}
		target = r.TargetRevision
		return target != previous && r.Complete && r.Counts.Succeeded == int32(owners),
			fmt.Sprintf("rollout to %s (previous %q): complete %v, counts %+v (want %d Succeeded)", target, previous, r.Complete, r.Counts, owners)
	})
	return target
}

// shardOf is the shard of a Workload named by TestShardsRealizeTheirOwnersAlone.
func shardOf(workload string) string {
	shard, _, _ := strings.Cut(workload, "-")
	if shard == "none" {
		return ""
	}
	return shard
}

// shardReadiness counts the Workloads of ns Ready at their generation, by shard ("" for
// those of none).
func shardReadiness(t *testing.T, ns string) map[string]int {
	t.Helper()
	var list v1alpha1.WorkloadList
	if err := k8s.List(ctx, &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, wl := range list.Items {
		c := meta.FindStatusCondition(wl.Status.Conditions, v1alpha1.ConditionReady)
		if c != nil && c.Status == metav1.ConditionTrue && wl.Status.ObservedGeneration == wl.Generation {
			out[wl.Labels[v1alpha1.LabelShardKey]]++
		}
	}
	return out
}
