package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/hack/cluster"
	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// readyChain stamps three ConfigMaps per Workload, each feeding the next, so every
// Workload's status has three resources with outputs, digests and conditions. NAME is
// replaced by the supply chain's name.
const readyChain = `
apiVersion: carto.run/v1alpha1
kind: ClusterSourceTemplate
metadata: {name: NAME-source}
spec:
  urlPath: .data.url
  revisionPath: .data.revision
  template:
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: $(workload.metadata.name)$-source}
    data: {url: $(workload.spec.source.git.url)$, revision: main}
---
apiVersion: carto.run/v1alpha1
kind: ClusterConfigTemplate
metadata: {name: NAME-config}
spec:
  configPath: .data
  template:
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: $(workload.metadata.name)$-config}
    data: {APP_SOURCE: $(source.url)$, APP_REVISION: $(source.revision)$}
---
apiVersion: carto.run/v1alpha1
kind: ClusterTemplate
metadata: {name: NAME-app}
spec:
  healthyConditionRule:
    multiMatch:
      healthy:
        matchCEL: [{expression: "object.data.APP_SOURCE.startsWith('https://')"}]
      unhealthy:
        matchFields: [{key: .data.broken, operator: Exists}]
  template:
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: $(workload.metadata.name)$-app}
    data: $(config)$
---
apiVersion: carto.run/v1alpha1
kind: ClusterSupplyChain
metadata: {name: NAME}
spec:
  selector: {bench.surveyor.dev/chain: NAME}
  serviceAccountRef: {name: stamper}
  resources:
    - name: source
      templateRef: {kind: ClusterSourceTemplate, name: NAME-source}
    - name: config
      templateRef: {kind: ClusterConfigTemplate, name: NAME-config}
      sources: [{name: source, resource: source}]
    - name: app
      templateRef: {kind: ClusterTemplate, name: NAME-app}
      configs: [{name: config, resource: config}]
`

// ReadyWorkloads makes a supply chain named name of three ConfigMaps (its templates are
// name-source, name-config and name-app), the namespaces name-0 … name-(namespaces-1)
// with a ServiceAccount that may stamp ConfigMaps, and n Workloads w-0000 … spread over
// them, and waits (up to timeout) until every one is Ready with its three resources. It
// is for benchmarks over many realistic owners; nothing is deleted afterwards.
func (e *Env) ReadyWorkloads(ctx context.Context, tb testing.TB, name string, n, namespaces int, timeout time.Duration) {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "chain.yaml")
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(readyChain, "NAME", name)), 0o644); err != nil {
		tb.Fatal(err)
	}
	if err := cluster.Apply(ctx, e.Cluster.Config, path); err != nil {
		tb.Fatal(err)
	}
	admin, err := e.FastClient()
	if err != nil {
		tb.Fatal(err)
	}
	for i := range namespaces {
		ns := fmt.Sprintf("%s-%d", name, i)
		for _, o := range append([]client.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}}, Stamper(ns, "stamper", "configmaps")...) {
			if err := admin.Create(ctx, o); err != nil {
				tb.Fatal(err)
			}
		}
	}
	start := time.Now()
	var g errgroup.Group
	g.SetLimit(16)
	for i := range n {
		g.Go(func() error {
			wl := fmt.Sprintf("w-%04d", i)
			return admin.Create(ctx, &v1alpha1.Workload{
				ObjectMeta: metav1.ObjectMeta{Name: wl, Namespace: fmt.Sprintf("%s-%d", name, i%namespaces),
					Labels: map[string]string{"bench.surveyor.dev/chain": name}},
				Spec: v1alpha1.WorkloadSpec{Source: &v1alpha1.Source{Git: &v1alpha1.GitSource{URL: "https://git.example.com/" + wl + ".git"}}},
			})
		})
	}
	if err := g.Wait(); err != nil {
		tb.Fatal(err)
	}
	e.Eventually(ctx, tb, timeout, func() (bool, string) {
		list := &v1alpha1.WorkloadList{}
		if err := admin.List(ctx, list, client.MatchingLabels{"bench.surveyor.dev/chain": name}); err != nil {
			return false, err.Error()
		}
		ready := 0
		for _, w := range list.Items {
			c := meta.FindStatusCondition(w.Status.Conditions, v1alpha1.ConditionReady)
			if len(w.Status.Resources) == 3 && c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == w.Generation {
				ready++
			}
		}
		return ready == n, fmt.Sprintf("%d of %d Workloads Ready", ready, n)
	})
	tb.Logf("%d Workloads Ready %s after the first was created", n, time.Since(start).Round(time.Second))
}
