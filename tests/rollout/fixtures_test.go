package rollout

import (
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// caseLabel selects a test's Workloads into its own supply chain; groupLabel puts them in a
// rollout group; healthLabel is what the health-probing template (healthFromLabel) reports.
const (
	caseLabel   = "test.surveyor.dev/case"
	groupLabel  = "group"
	healthLabel = "health"
)

// stamper is the ServiceAccount every Workload here stamps as; it may write ConfigMaps in its
// namespace only.
const stamper = "stamper"

// healthFromLabel, as a template's health value, makes each Workload's ConfigMap report its own
// healthLabel: "ok" is healthy, "bad" unhealthy, anything else neither (Ready stays Unknown).
const healthFromLabel = "$(workload.metadata.labels." + healthLabel + ")$"

// newNamespace creates a namespace where the stamper ServiceAccount may write ConfigMaps,
// deleted after the test.
func newNamespace(t *testing.T, prefix string) string {
	t.Helper()
	return env.StamperNamespace(ctx, t, k8s, prefix, stamper)
}

// templateSpec stamps one ConfigMap per Workload, named after it, holding version and health;
// its health rule reads .data.health as the kuttl rollout cases do.
func templateSpec(t *testing.T, version, health string) v1alpha1.TemplateSpec {
	t.Helper()
	var spec v1alpha1.TemplateSpec
	doc := fmt.Sprintf(`{
		"healthRule": {"multiMatch": {
			"healthy":   {"matchFields": [{"key": ".data.health", "operator": "In", "values": ["ok"]}]},
			"unhealthy": {"matchFields": [{"key": ".data.health", "operator": "In", "values": ["bad"]}]}}},
		"template": {"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": {"name": "$(workload.metadata.name)$"},
			"data": {"version": %q, "health": %q}}}`, version, health)
	if err := json.Unmarshal([]byte(doc), &spec); err != nil {
		t.Fatal(err)
	}
	return spec
}

// rolloutCase creates a ClusterTemplate and a supply chain, both named name, that stamp version
// v1 (health "ok") for the Workloads labelled caseLabel=name, rolled out with strategy.
func rolloutCase(t *testing.T, name string, strategy v1alpha1.RolloutStrategy) {
	t.Helper()
	env.CreateAll(ctx, t,
		&v1alpha1.ClusterTemplate{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: templateSpec(t, "v1", "ok")},
		&v1alpha1.ClusterSupplyChain{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: v1alpha1.ClusterSupplyChainSpec{
				OwnerSelector:   v1alpha1.OwnerSelector{Selector: map[string]string{caseLabel: name}},
				RolloutStrategy: &strategy,
				Resources: []v1alpha1.SupplyChainResource{{Name: "app",
					TemplateRef: v1alpha1.SupplyChainTemplateReference{Kind: v1alpha1.KindClusterTemplate, Name: name}}},
			},
		},
	)
}

// change rolls version out: it first sets the supply chain's minSuccessTime (which is not part
// of a revision, so it starts no rollout of its own; the first revision, which every owner runs
// at once, need not soak), then changes the template to stamp version with health.
func change(t *testing.T, name string, minSuccess time.Duration, version, health string) {
	t.Helper()
	update(t, &v1alpha1.ClusterSupplyChain{}, name, func(sc *v1alpha1.ClusterSupplyChain) {
		sc.Spec.RolloutStrategy.MinSuccessTime = &metav1.Duration{Duration: minSuccess}
	})
	update(t, &v1alpha1.ClusterTemplate{}, name, func(tpl *v1alpha1.ClusterTemplate) {
		tpl.Spec = templateSpec(t, version, health)
	})
}

// update reads the cluster-scoped object name into obj, changes it and writes it back, again on
// a conflict.
func update[T client.Object](t *testing.T, obj T, name string, mutate func(T)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := k8s.Get(ctx, client.ObjectKey{Name: name}, obj); err != nil {
			return err
		}
		mutate(obj)
		return k8s.Update(ctx, obj)
	})
	if err != nil {
		t.Fatalf("updating %T %s: %v", obj, name, err)
	}
}

// workloadName is the name of the i-th Workload a test creates.
func workloadName(i int) string { return fmt.Sprintf("wl-%03d", i) }

// createWorkloads creates n Workloads for the supply chain chain, the i-th with the extra labels
// of labels(i) (healthLabel "ok" unless they say otherwise), with 16 concurrent writers.
func createWorkloads(t *testing.T, ns, chain string, n int, labels func(i int) map[string]string) {
	t.Helper()
	var wg sync.WaitGroup
	var failed atomic.Value
	next := make(chan int)
	for range 16 {
		wg.Go(func() {
			for i := range next {
				wl := &v1alpha1.Workload{
					ObjectMeta: metav1.ObjectMeta{Name: workloadName(i), Namespace: ns,
						Labels: map[string]string{caseLabel: chain, healthLabel: "ok"}},
					Spec: v1alpha1.WorkloadSpec{ServiceAccountName: stamper},
				}
				for k, v := range labels(i) {
					wl.Labels[k] = v
				}
				if err := k8s.Create(ctx, wl); err != nil {
					failed.Store(fmt.Errorf("creating workload %d: %w", i, err))
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	if err, ok := failed.Load().(error); ok {
		t.Fatal(err)
	}
}

// inGroups labels the i-th of n Workloads into one of groups, in equal consecutive runs.
func inGroups(n int, groups ...string) func(int) map[string]string {
	return func(i int) map[string]string {
		return map[string]string{groupLabel: groups[i*len(groups)/n]}
	}
}

// groupsByLabel are rollout groups g selecting the Workloads labelled groupLabel=g.
func groupsByLabel(names ...string) []v1alpha1.RolloutGroup {
	var out []v1alpha1.RolloutGroup
	for _, g := range names {
		out = append(out, v1alpha1.RolloutGroup{Name: g, Selector: metav1.LabelSelector{MatchLabels: map[string]string{groupLabel: g}}})
	}
	return out
}

// canaryCase is a rollout case, name, of n Workloads in a new namespace, which it returns: canary
// (labelled health=bad) alone in the mandatory group canary, the others in group rest.
func canaryCase(t *testing.T, name string, n int, canary string) string {
	t.Helper()
	ns := newNamespace(t, name)
	rolloutCase(t, name, v1alpha1.RolloutStrategy{
		Type: v1alpha1.RolloutProgressivePerGroup, Groups: groupsByLabel("canary", "rest"), MandatoryGroups: []string{"canary"},
	})
	createWorkloads(t, ns, name, n, func(i int) map[string]string {
		if workloadName(i) == canary {
			return map[string]string{groupLabel: "canary", healthLabel: "bad"}
		}
		return map[string]string{groupLabel: "rest"}
	})
	return ns
}
