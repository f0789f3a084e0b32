package faults

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"

	"github.com/surveyor-dev/surveyor/internal/harness"
)

// caseLabel selects a test's Workloads into its own supply chain.
const caseLabel = harness.CaseLabel

// stamper is the ServiceAccount every Workload here stamps as; it may write ConfigMaps
// in its namespace only.
const stamper = "stamper"

// newNamespace creates a namespace where the stamper ServiceAccount may write ConfigMaps,
// deleted after the test.
func newNamespace(t testing.TB, prefix string) string {
	t.Helper()
	return env.StamperNamespace(ctx, t, k8s, prefix, stamper)
}

// stampsPerWorkload is how many ConfigMaps configMapChain stamps for each Workload.
const stampsPerWorkload = 2

// configMapChain creates harness.ConfigMapChain named name, whose "app" ConfigMap also has
// data.mode "stamped".
func configMapChain(t testing.TB, name string) {
	t.Helper()
	env.CreateAll(ctx, t, harness.ConfigMapChain(t, name, `"mode": "stamped"`)...)
}

// workloadName is the name of the i-th Workload a test creates.
func workloadName(i int) string { return fmt.Sprintf("wl-%03d", i) }

// newWorkload is a Workload for configMapChain's supply chain name.
func newWorkload(ns, chain string, i int) *v1alpha1.Workload {
	return &v1alpha1.Workload{
		ObjectMeta: metav1.ObjectMeta{Name: workloadName(i), Namespace: ns, Labels: map[string]string{caseLabel: chain}},
		Spec: v1alpha1.WorkloadSpec{
			ServiceAccountName: stamper,
			Source:             &v1alpha1.Source{Git: &v1alpha1.GitSource{URL: fmt.Sprintf("https://example.com/%s/%s.git", chain, workloadName(i))}},
		},
	}
}

// createWorkloads creates Workloads from..to-1 with 16 concurrent writers.
func createWorkloads(t testing.TB, ns, chain string, from, to int) {
	t.Helper()
	createConcurrently(t, 16, from, to, func(i int) client.Object { return newWorkload(ns, chain, i) })
}

// createConcurrently creates the objects newObject makes for from..to-1 with the given
// number of concurrent writers.
func createConcurrently(t testing.TB, writers, from, to int, newObject func(i int) client.Object) {
	t.Helper()
	var wg sync.WaitGroup
	var failed atomic.Value
	next := make(chan int)
	for range writers {
		wg.Go(func() {
			for i := range next {
				obj := newObject(i)
				if err := k8s.Create(ctx, obj); err != nil {
					failed.Store(fmt.Errorf("creating %T %s: %w", obj, obj.GetName(), err))
				}
			}
		})
	}
	for i := from; i < to; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	if err, ok := failed.Load().(error); ok {
		t.Fatal(err)
	}
}

// readiness counts the namespace's Workloads that are Ready=True at their generation.
func readiness(ns string) (ready, total int, err error) {
	var list v1alpha1.WorkloadList
	if err := k8s.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return 0, 0, err
	}
	for i := range list.Items {
		if isReady(&list.Items[i]) {
			ready++
		}
	}
	return ready, len(list.Items), nil
}

// isReady says whether the Workload is Ready=True at its current generation.
func isReady(wl *v1alpha1.Workload) bool {
	c := meta.FindStatusCondition(wl.Status.Conditions, v1alpha1.ConditionReady)
	return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == wl.Generation &&
		wl.Status.ObservedGeneration == wl.Generation
}

// waitAllReady waits until n Workloads exist in ns and all are Ready.
func waitAllReady(t *testing.T, ns string, n int, timeout time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	eventually(t, timeout, func() (bool, string) {
		ready, total, err := readiness(ns)
		if err != nil {
			return false, err.Error()
		}
		return ready == n && total == n, fmt.Sprintf("%d of %d workloads ready (want %d)", ready, total, n)
	})
	return time.Since(start)
}

// stampedConfigMaps lists the ConfigMaps stamped in ns by the supply chain chain.
func stampedConfigMaps(t *testing.T, ns, chain string) []corev1.ConfigMap {
	t.Helper()
	var list corev1.ConfigMapList
	if err := k8s.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{v1alpha1.LabelSupplyChainName: chain}); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// assertStampedOnce checks that the Workloads 0..n-1 of ns have exactly one stamped
// ConfigMap per resource: the expected names, each controlled by its own Workload (by
// UID) and labelled for it, and nothing else carrying the supply chain's label.
func assertStampedOnce(t *testing.T, ns, chain string, n int) []corev1.ConfigMap {
	t.Helper()
	cms := stampedConfigMaps(t, ns, chain)
	if got, want := len(cms), n*stampsPerWorkload; got != want {
		t.Errorf("%d ConfigMaps carry %s=%s, want exactly %d (%d workloads x %d resources)",
			got, v1alpha1.LabelSupplyChainName, chain, want, n, stampsPerWorkload)
	}
	var list v1alpha1.WorkloadList
	if err := k8s.List(ctx, &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	uids := map[string]string{}
	for _, wl := range list.Items {
		uids[wl.Name] = string(wl.UID)
	}
	want := map[string]string{} // ConfigMap name -> workload
	for i := range n {
		want[workloadName(i)+"-config"] = workloadName(i)
		want[workloadName(i)+"-app"] = workloadName(i)
	}
	seen := map[string]bool{}
	for _, cm := range cms {
		wl, ok := want[cm.Name]
		switch {
		case !ok:
			t.Errorf("unexpected stamped ConfigMap %s", cm.Name)
			continue
		case seen[cm.Name]:
			t.Errorf("ConfigMap %s listed twice", cm.Name)
		}
		seen[cm.Name] = true
		if got := cm.Labels[v1alpha1.LabelWorkloadName]; got != wl {
			t.Errorf("ConfigMap %s: label %s=%q, want %q", cm.Name, v1alpha1.LabelWorkloadName, got, wl)
		}
		var controllers []string
		for _, ref := range cm.OwnerReferences {
			if ref.Controller != nil && *ref.Controller {
				controllers = append(controllers, ref.Name+"/"+string(ref.UID))
			}
		}
		if len(controllers) != 1 || controllers[0] != wl+"/"+uids[wl] {
			t.Errorf("ConfigMap %s: controller owners %v, want exactly [%s/%s]", cm.Name, controllers, wl, uids[wl])
		}
	}
	return cms
}

// resourceVersions maps each ConfigMap's name to its resourceVersion.
func resourceVersions(cms []corev1.ConfigMap) map[string]string {
	rv := make(map[string]string, len(cms))
	for _, cm := range cms {
		rv[cm.Name] = cm.ResourceVersion
	}
	return rv
}
