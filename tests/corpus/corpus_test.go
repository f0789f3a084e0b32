// Package corpus applies Surveyor's bad-input corpus (cases/*.yaml), together with 50
// healthy Workloads, to the local cluster of hack/cluster with the realizer running
// in-process, and checks that every mistake ends in the exact condition its case
// expects (DESIGN §6), that the healthy Workloads are untouched by the bad ones, and
// that the controller never panics. See README.md for the case format.
package corpus

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/surveyor-dev/surveyor/internal/harness"
)

const (
	// namespace holds every Workload of the corpus and the healthy ones.
	namespace = "surveyor-corpus"
	// stamper is the ServiceAccount the corpus Workloads stamp as.
	stamper = "stamper"
	// healthyCount is how many healthy Workloads run beside the corpus.
	healthyCount = 50
	// settleTimeout bounds the wait for every expectation, counted from the moment
	// everything was applied; the whole test stays under three minutes.
	settleTimeout = 90 * time.Second
	// settleHold is how long every expectation must keep holding, at every observation,
	// before the corpus counts as settled: a condition passing through the expected
	// state on its way elsewhere is not it.
	settleHold = 3 * time.Second
	// quietWindow is how long the controller is watched for busy loops once settled.
	// Failures that only a retry can fix (an RBAC denial) are retried with an
	// exponential backoff; a busy loop reconciles many times a second, so a few
	// seconds tell the two apart.
	quietWindow = 5 * time.Second
	// quietReconcileRate is the most workload reconciles a second the quiet window may see.
	quietReconcileRate = 5
)

// admin is an admin client without client-side rate limiting.
var admin client.Client

// TestCorpus applies every case and the healthy Workloads at once and waits until each
// expectation holds, then reports every case that did not reach its condition.
func TestCorpus(t *testing.T) {
	start := time.Now()
	cases, err := loadCases(filepath.Join(harness.Root(), "tests/corpus/cases"), templateData{Namespace: namespace})
	if err != nil {
		t.Fatal(err)
	}
	if err := checkIsolation(cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 40 {
		t.Fatalf("the corpus has %d cases, want at least 40", len(cases))
	}
	// The harness's admin client keeps client-go's default rate limit (5 requests a
	// second), which would spend most of the budget on creating the corpus.
	cfg := rest.CopyConfig(env.Cluster.Config)
	cfg.QPS, cfg.Burst = 500, 1000
	if admin, err = client.New(cfg, client.Options{Scheme: env.Scheme}); err != nil {
		t.Fatal(err)
	}
	setupNamespace(t)

	healthy := healthyObjects()
	rejections := applyAll(t, cases, healthy)
	applied := time.Now()
	t.Logf("applied %d cases and %d healthy workloads in %s (cluster and controller were up after %s)",
		len(cases), healthyCount, applied.Sub(start).Round(time.Millisecond), time.Since(processStart).Round(time.Second))

	var last map[string][]string // case -> unmet expectations
	var lastHealthy []string
	var metSince time.Time // zero while some expectation is unmet
	lastProgress := time.Now()
	err = wait.PollUntilContextTimeout(ctx, time.Second, time.Until(applied.Add(settleTimeout)), true, func(context.Context) (bool, error) {
		obs := observe(t)
		last = map[string][]string{}
		for _, c := range cases {
			if unmet := c.unmet(obs, rejections); len(unmet) > 0 {
				last[c.ID] = unmet
			}
		}
		lastHealthy = unhealthy(obs)
		if time.Since(lastProgress) >= 10*time.Second {
			lastProgress = time.Now()
			t.Logf("%s after applying: %d of %d cases met, %d of %d healthy workloads not Ready yet",
				time.Since(applied).Round(time.Second), len(cases)-len(last), len(cases), len(lastHealthy), healthyCount)
		}
		if len(last) > 0 || len(lastHealthy) > 0 {
			metSince = time.Time{}
			return false, nil
		}
		if metSince.IsZero() {
			metSince = time.Now()
		}
		return time.Since(metSince) >= settleHold, nil
	})
	if err != nil && len(last) == 0 && len(lastHealthy) == 0 {
		// Every case is reported below; this is the one failure they cannot show.
		t.Errorf("every expectation was met only %s before the %s deadline, want them to hold for %s",
			time.Since(metSince).Round(time.Millisecond), settleTimeout, settleHold)
	}
	settled := time.Now()
	t.Logf("expectations settled %s after applying", settled.Sub(applied).Round(time.Millisecond))
	if dir := os.Getenv("SURVEYOR_CORPUS_DUMP"); dir != "" {
		dumpWorkloads(t, dir, cases)
	}

	for _, c := range cases {
		t.Run(c.ID, func(t *testing.T) {
			for _, msg := range last[c.ID] {
				t.Errorf("%s: %s", c.File, msg)
			}
		})
	}
	t.Run("healthy", func(t *testing.T) {
		for _, msg := range lastHealthy {
			t.Error(msg)
		}
	})
	t.Run("no-panic", func(t *testing.T) {
		log := env.Log.String()
		for _, needle := range []string{"panic", "ReconcilePanicked"} {
			if i := strings.Index(strings.ToLower(log), strings.ToLower(needle)); i >= 0 {
				t.Errorf("controller log mentions %q:\n%s", needle, excerpt(log, i))
			}
		}
		for _, wl := range observe(t).workloads {
			if c := condition(wl.Object, "", "Ready"); c != nil && c["reason"] == "ReconcilePanicked" {
				t.Errorf("workload %s: Ready reason ReconcilePanicked", wl.GetName())
			}
		}
	})
	t.Run("no-busy-loop", func(t *testing.T) {
		before := harness.ReconcileTotal(t, "workload")
		limit := quietReconcileRate * quietWindow.Seconds()
		var n float64
		env.Consistently(ctx, t, quietWindow, 250*time.Millisecond, func() (bool, string) {
			n = harness.ReconcileTotal(t, "workload") - before
			return n <= limit, fmt.Sprintf("%v workload reconciles after the corpus settled, want at most %v in %s: something busy-loops",
				n, limit, quietWindow)
		})
		t.Logf("%v workload reconciles in a quiet %s window", n, quietWindow)
	})
	if t.Failed() {
		t.Logf("controller log (last 200 lines):\n%s", tail(env.Log.String(), 200))
	}
	t.Logf("corpus test took %s (%s since the process started)", time.Since(start).Round(time.Millisecond), time.Since(processStart).Round(time.Second))
}

// dumpWorkloads writes each case's Workloads, status included, to dir/<case>.yaml: the
// owner fixtures of pkg/view's golden tests are captured this way (see its testdata).
func dumpWorkloads(t *testing.T, dir string, cases []*corpusCase) {
	for _, c := range cases {
		var docs []string
		for _, wl := range observe(t).workloads {
			if wl.GetLabels()[caseLabel] != c.ID && wl.GetName() != c.ID {
				continue
			}
			unstructured.RemoveNestedField(wl.Object, "metadata", "managedFields")
			b, err := yaml.Marshal(wl.Object)
			if err != nil {
				t.Fatal(err)
			}
			docs = append(docs, string(b))
		}
		if len(docs) == 0 {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, c.ID+".yaml"), []byte(strings.Join(docs, "---\n")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// processStart is when the test binary started, cluster start-up included.
var processStart = time.Now()

// setupNamespace creates the namespace and the stamping ServiceAccount with RBAC for
// everything the corpus stamps, and waits until the authorizer knows the binding.
func setupNamespace(t *testing.T) {
	t.Helper()
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: stamper, Namespace: namespace}},
		&rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Name: stamper, Namespace: namespace},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps", "services", "secrets"},
				Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}}},
		},
		&rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: stamper, Namespace: namespace},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: stamper},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: stamper, Namespace: namespace}},
		},
	}
	for _, o := range objs {
		if err := admin.Create(ctx, o); err != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
	env.Eventually(ctx, t, 30*time.Second, func() (bool, string) {
		for _, res := range []string{"configmaps", "services", "secrets"} {
			sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
				User: "system:serviceaccount:" + namespace + ":" + stamper,
				ResourceAttributes: &authorizationv1.ResourceAttributes{
					Namespace: namespace, Verb: "patch", Resource: res,
				},
			}}
			if err := admin.Create(ctx, sar); err != nil {
				return false, err.Error()
			}
			if !sar.Status.Allowed {
				return false, "stamper may not patch " + res + " yet"
			}
		}
		return true, ""
	})
}

// applyAll creates every object of every case and the healthy objects: templates first,
// then supply chains, then everything namespaced, so that nothing waits on a missing
// template only because of creation order. It returns the API server's error for each
// object it refused, keyed by "Kind/name".
func applyAll(t *testing.T, cases []*corpusCase, healthy []*unstructured.Unstructured) map[string]string {
	t.Helper()
	var all []*unstructured.Unstructured
	for _, c := range cases {
		all = append(all, c.Objects...)
	}
	all = append(all, healthy...)
	rank := func(u *unstructured.Unstructured) int {
		switch {
		case strings.HasSuffix(u.GetKind(), "Template"):
			return 0
		case u.GetKind() == "ClusterSupplyChain":
			return 1
		}
		return 2
	}
	slices.SortStableFunc(all, func(a, b *unstructured.Unstructured) int { return rank(a) - rank(b) })
	rejections := map[string]string{}
	for _, u := range all {
		obj := u.DeepCopy()
		if rank(obj) == 2 && obj.GetNamespace() == "" {
			obj.SetNamespace(namespace)
		}
		if err := admin.Create(ctx, obj); err != nil {
			rejections[u.GetKind()+"/"+u.GetName()] = err.Error()
		}
	}
	return rejections
}

// healthyObjects is a three-step supply chain (source, config, app) and healthyCount
// Workloads it selects.
func healthyObjects() []*unstructured.Unstructured {
	objs := []*unstructured.Unstructured{
		obj(map[string]any{
			"apiVersion": "carto.run/v1alpha1", "kind": "ClusterSourceTemplate",
			"metadata": map[string]any{"name": "corpus-healthy-source"},
			"spec": map[string]any{
				"urlPath": ".data.url", "revisionPath": ".data.revision",
				"template": map[string]any{
					"apiVersion": "v1", "kind": "ConfigMap",
					"metadata": map[string]any{"name": "$(workload.metadata.name)$-source"},
					"data":     map[string]any{"url": "$(workload.spec.source.git.url)$", "revision": "$(workload.spec.source.git.ref.branch)$"},
				},
			},
		}),
		obj(map[string]any{
			"apiVersion": "carto.run/v1alpha1", "kind": "ClusterConfigTemplate",
			"metadata": map[string]any{"name": "corpus-healthy-config"},
			"spec": map[string]any{
				"configPath": ".data",
				"params":     []any{map[string]any{"name": "port", "default": int64(8080)}},
				"template": map[string]any{
					"apiVersion": "v1", "kind": "ConfigMap",
					"metadata": map[string]any{"name": "$(workload.metadata.name)$-config"},
					"data":     map[string]any{"source": "$(source.url)$@$(source.revision)$", "port": "port-$(params.port)$"},
				},
			},
		}),
		obj(map[string]any{
			"apiVersion": "carto.run/v1alpha1", "kind": "ClusterTemplate",
			"metadata": map[string]any{"name": "corpus-healthy-app"},
			"spec": map[string]any{
				"healthyConditionRule": map[string]any{"multiMatch": map[string]any{
					"healthy":   map[string]any{"matchCEL": []any{map[string]any{"expression": "object.data.source.startsWith('https://')", "messageExpression": "'serving ' + object.data.source"}}},
					"unhealthy": map[string]any{"matchFields": []any{map[string]any{"key": ".data.source", "operator": "In", "values": []any{"@"}}}},
				}},
				"template": map[string]any{
					"apiVersion": "v1", "kind": "ConfigMap",
					"metadata": map[string]any{"name": "$(workload.metadata.name)$-app"},
					"data":     map[string]any{"source": "$(config.source)$", "port": "$(config.port)$"},
				},
			},
		}),
		obj(map[string]any{
			"apiVersion": "carto.run/v1alpha1", "kind": "ClusterSupplyChain",
			"metadata": map[string]any{"name": "corpus-healthy"},
			"spec": map[string]any{
				"selector": map[string]any{"corpus.surveyor.dev/case": "healthy"},
				"resources": []any{
					map[string]any{"name": "source", "templateRef": map[string]any{"kind": "ClusterSourceTemplate", "name": "corpus-healthy-source"}},
					map[string]any{"name": "config", "templateRef": map[string]any{"kind": "ClusterConfigTemplate", "name": "corpus-healthy-config"},
						"sources": []any{map[string]any{"name": "source", "resource": "source"}}},
					map[string]any{"name": "app", "templateRef": map[string]any{"kind": "ClusterTemplate", "name": "corpus-healthy-app"},
						"configs": []any{map[string]any{"name": "config", "resource": "config"}}},
				},
			},
		}),
	}
	for i := range healthyCount {
		objs = append(objs, obj(map[string]any{
			"apiVersion": "carto.run/v1alpha1", "kind": "Workload",
			"metadata": map[string]any{"name": fmt.Sprintf("healthy-%02d", i), "labels": map[string]any{"corpus.surveyor.dev/case": "healthy"}},
			"spec": map[string]any{
				"serviceAccountName": stamper,
				"source":             map[string]any{"git": map[string]any{"url": fmt.Sprintf("https://example.com/healthy-%02d.git", i), "ref": map[string]any{"branch": "main"}}},
			},
		}))
	}
	return objs
}

func obj(m map[string]any) *unstructured.Unstructured { return &unstructured.Unstructured{Object: m} }

// unhealthy lists the healthy Workloads that are not Ready=True at their generation.
func unhealthy(obs *observation) []string {
	var out []string
	seen := 0
	for _, wl := range obs.workloads {
		if !strings.HasPrefix(wl.GetName(), "healthy-") {
			continue
		}
		seen++
		c := condition(wl.Object, "", "Ready")
		gen, _, _ := unstructured.NestedInt64(wl.Object, "status", "observedGeneration")
		if c == nil || c["status"] != "True" || gen != wl.GetGeneration() {
			out = append(out, fmt.Sprintf("workload %s is not Ready: %v", wl.GetName(), c))
		}
	}
	if seen != healthyCount {
		out = append(out, fmt.Sprintf("found %d healthy workloads, want %d", seen, healthyCount))
	}
	return out
}

func excerpt(s string, i int) string {
	from, to := max(0, i-1500), min(len(s), i+1500)
	return s[from:to]
}

func tail(s string, lines int) string {
	parts := strings.Split(s, "\n")
	if len(parts) > lines {
		parts = parts[len(parts)-lines:]
	}
	return strings.Join(parts, "\n")
}
