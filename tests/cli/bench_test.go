package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/hack/cluster"
	"github.com/surveyor-dev/surveyor/hack/tools"
	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/tests/harness"
)

// benchWorkloads is how many Workloads BenchmarkGetAll lists, spread over benchNamespaces.
const (
	benchWorkloads  = 1000
	benchNamespaces = 4
)

// benchChain stamps three ConfigMaps per Workload, each feeding the next, so every
// Workload's status has three resources with outputs, digests and conditions.
const benchChain = `
apiVersion: carto.run/v1alpha1
kind: ClusterSourceTemplate
metadata: {name: bench-cli-source}
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
metadata: {name: bench-cli-config}
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
metadata: {name: bench-cli-app}
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
metadata: {name: bench-cli}
spec:
  selector: {bench.surveyor.dev/chain: cli}
  serviceAccountRef: {name: stamper}
  resources:
    - name: source
      templateRef: {kind: ClusterSourceTemplate, name: bench-cli-source}
    - name: config
      templateRef: {kind: ClusterConfigTemplate, name: bench-cli-config}
      sources: [{name: source, resource: source}]
    - name: app
      templateRef: {kind: ClusterTemplate, name: bench-cli-app}
      configs: [{name: config, resource: config}]
`

var benchSetup sync.Once

// BenchmarkGetAll times `kubectl carto get -A`, the built plugin run as a user would,
// over 1,000 Ready Workloads in 4 namespaces, each with three stamped resources, and
// `kubectl get workloads -A` over the same for reference. It is not run by `go test`
// without -bench:
//
//	go test -count=1 -run '^$' -bench GetAll -benchtime 10x ./tests/cli/
func BenchmarkGetAll(b *testing.B) {
	benchSetup.Do(func() { createBenchWorkloads(b) })
	plugin := filepath.Join(b.TempDir(), "kubectl-carto")
	build := exec.Command("go", "build", "-o", plugin, "./cmd/kubectl-carto")
	build.Dir = harness.Root()
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("building kubectl-carto: %v: %s", err, out)
	}
	kubectl, err := tools.Path("kubectl", io.Discard)
	if err != nil {
		b.Fatal(err)
	}
	for _, cmd := range []struct {
		name string
		argv []string
	}{
		{"kubectl-carto", []string{plugin, "get", "-A"}},
		{"kubectl", []string{kubectl, "get", "workloads", "-A"}},
	} {
		b.Run(cmd.name, func(b *testing.B) {
			var out bytes.Buffer
			for b.Loop() {
				out.Reset()
				c := exec.Command(cmd.argv[0], append(cmd.argv[1:], "--kubeconfig", env.Cluster.Kubeconfig)...)
				c.Stdout, c.Stderr = &out, os.Stderr
				if err := c.Run(); err != nil {
					b.Fatal(err)
				}
			}
			if rows := strings.Count(out.String(), "\n") - 1; rows < benchWorkloads {
				b.Fatalf("%s printed %d rows, want at least %d", cmd.name, rows, benchWorkloads)
			}
		})
	}
}

// createBenchWorkloads makes the supply chain, the namespaces with a ServiceAccount that
// may stamp ConfigMaps, and the Workloads, and waits until every one is Ready.
func createBenchWorkloads(b *testing.B) {
	path := filepath.Join(b.TempDir(), "chain.yaml")
	if err := os.WriteFile(path, []byte(benchChain), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := cluster.Apply(ctx, env.Cluster.Config, path); err != nil {
		b.Fatal(err)
	}
	for n := range benchNamespaces {
		ns := fmt.Sprintf("bench-cli-%d", n)
		for _, o := range []client.Object{
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
			&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "stamper", Namespace: ns}},
			&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "stamper", Namespace: ns}, Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
			}},
			&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "stamper", Namespace: ns},
				RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "stamper"},
				Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "stamper", Namespace: ns}}},
		} {
			if err := env.Client.Create(ctx, o); err != nil {
				b.Fatal(err)
			}
		}
	}
	// The harness's admin client keeps client-go's 5 requests a second.
	cfg := rest.CopyConfig(env.Cluster.Config)
	cfg.QPS, cfg.Burst = 200, 400
	admin, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	var g errgroup.Group
	g.SetLimit(16)
	for i := range benchWorkloads {
		g.Go(func() error {
			name := fmt.Sprintf("w-%04d", i)
			return admin.Create(ctx, &v1alpha1.Workload{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: fmt.Sprintf("bench-cli-%d", i%benchNamespaces),
					Labels: map[string]string{"bench.surveyor.dev/chain": "cli"}},
				Spec: v1alpha1.WorkloadSpec{Source: &v1alpha1.Source{Git: &v1alpha1.GitSource{URL: "https://git.example.com/" + name + ".git"}}},
			})
		})
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
	eventually(b, 10*time.Minute, func() (bool, string) {
		list := &v1alpha1.WorkloadList{}
		if err := env.Client.List(ctx, list); err != nil {
			return false, err.Error()
		}
		ready := 0
		for _, w := range list.Items {
			c := meta.FindStatusCondition(w.Status.Conditions, v1alpha1.ConditionReady)
			if len(w.Status.Resources) == 3 && c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == w.Generation {
				ready++
			}
		}
		return ready == benchWorkloads, fmt.Sprintf("%d of %d Workloads Ready", ready, benchWorkloads)
	})
	b.Logf("%d Workloads Ready %s after the first was created", benchWorkloads, time.Since(start).Round(time.Second))
}
