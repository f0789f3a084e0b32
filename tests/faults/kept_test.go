package faults

import (
	"fmt"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/internal/harness"
)

// A restarted controller does not know what the API server made of its last apply of an
// object that the server keeps otherwise than stamped (answers.go in pkg/realizer), and
// learns it with a dry run, not a write: across a restart, an object whose field a newer
// CRD version drops is written never again and its generation stays (issue 37; an upgrade
// must write nothing, DESIGN §13).
func TestRestartDoesNotRewriteWhatTheServerDropped(t *testing.T) {
	const group = "kept.faults.example.com"
	const chain = "faults-kept"
	ns := newNamespace(t, chain)
	crd := newCRD(group, "Dropped")
	// v1 (storage) has no gitImplementation, v1beta1 has: the server drops it, as Flux's
	// GitRepository v1 drops v1beta1's.
	spec := func(fields map[string]any) map[string]any {
		return map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "properties": map[string]any{
			"spec": map[string]any{"type": "object", "properties": fields}}}}
	}
	str := map[string]any{"type": "string"}
	if err := unstructured.SetNestedSlice(crd.Object, []any{
		map[string]any{"name": "v1", "served": true, "storage": true, "schema": spec(map[string]any{"url": str})},
		map[string]any{"name": "v1beta1", "served": true, "storage": false, "schema": spec(map[string]any{"url": str, "gitImplementation": str})},
	}, "spec", "versions"); err != nil {
		t.Fatal(err)
	}
	createCRD(t, crd)
	grant(t, ns, "droppeds", rbacv1.PolicyRule{APIGroups: []string{group}, Resources: []string{"droppeds"},
		Verbs: []string{"get", "list", "watch", "create", "update", "patch"}})
	env.CreateAll(ctx, t,
		chainTemplate(t, chain+"-repo", `{"apiVersion": "`+group+`/v1beta1", "kind": "Dropped",
			"metadata": {"name": "$(workload.metadata.name)$"},
			"spec": {"url": "$(workload.spec.source.git.url)$", "gitImplementation": "libgit2"}}`),
		templatesChain(chain, "repo"),
	)
	c := launchController(t, "surveyor-kept")
	c.waitLeader(t, 2*time.Minute)
	env.CreateAll(ctx, t, newWorkload(ns, chain, 0))
	waitAllReady(t, ns, 1, 2*time.Minute)
	repo := &unstructured.Unstructured{}
	repo.SetAPIVersion(group + "/v1beta1")
	repo.SetKind("Dropped")
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: workloadName(0)}, repo); err != nil {
		t.Fatal(err)
	}
	if _, found, _ := unstructured.NestedString(repo.Object, "spec", "gitImplementation"); found {
		t.Fatal("the API server kept spec.gitImplementation: the test does not drop a field")
	}
	writes, dryRuns := applies(t, "droppeds")

	if err := env.Cluster.Terminate(c.Name); err != nil {
		t.Fatal(err)
	}
	c.relaunch(t)
	c.waitLeader(t, 2*time.Minute)
	// The new process asked the server what it makes of the stamp, once it reconciled.
	eventually(t, time.Minute, func() (bool, string) {
		_, d := applies(t, "droppeds")
		return d > dryRuns, fmt.Sprintf("%v dry runs since the restart, %.0f reconciles", d-dryRuns, c.counters(t).reconciles)
	})
	waitAllReady(t, ns, 1, time.Minute)
	if w, _ := applies(t, "droppeds"); w != writes {
		t.Errorf("%v writes to the object since the restart, want 0", w-writes)
	}
	got := repo.DeepCopy()
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(repo), got); err != nil {
		t.Fatal(err)
	}
	if got.GetGeneration() != repo.GetGeneration() || got.GetResourceVersion() != repo.GetResourceVersion() {
		t.Errorf("the object went from generation %d (resourceVersion %s) to %d (%s) across the restart",
			repo.GetGeneration(), repo.GetResourceVersion(), got.GetGeneration(), got.GetResourceVersion())
	}
}

// applies is the API server's count of server-side applies, patches, updates and creates
// of resource that wrote, and of dry runs.
func applies(t *testing.T, resource string) (writes, dryRuns float64) {
	t.Helper()
	for _, m := range env.APIServerMetrics(t)["apiserver_request_total"].GetMetric() {
		switch harness.Label(m, "verb") {
		case "CREATE", "UPDATE", "PATCH", "APPLY":
		default:
			continue
		}
		if harness.Label(m, "resource") != resource || harness.Label(m, "subresource") != "" {
			continue
		}
		if harness.Label(m, "dry_run") == "" {
			writes += m.GetCounter().GetValue()
		} else {
			dryRuns += m.GetCounter().GetValue()
		}
	}
	return writes, dryRuns
}
