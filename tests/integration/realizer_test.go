package integration

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"

	"github.com/surveyor-dev/surveyor/tests/harness"
)

// A converged Workload costs nothing: reconciles forced after it is Ready write
// neither its stamped objects nor its status, as the API server's own request
// counters show.
func TestRealizerConvergedWorkloadCostsZeroWrites(t *testing.T) {
	ns := newNamespace(t)
	grantStamping(t, ns, "stamper", "configmaps")
	name := "zero-writes"
	env.CreateAll(ctx, t,
		&v1alpha1.ClusterSourceTemplate{
			ObjectMeta: metav1.ObjectMeta{Name: name + "-source"},
			Spec: v1alpha1.ClusterSourceTemplateSpec{
				URLPath: ".data.url", RevisionPath: ".data.revision",
				TemplateSpec: v1alpha1.TemplateSpec{Template: harness.RawTemplate(t, `{
					"apiVersion": "v1", "kind": "ConfigMap",
					"metadata": {"name": "$(workload.metadata.name)$-source"},
					"data": {"url": "$(workload.spec.source.git.url)$", "revision": "$(workload.spec.source.git.ref.branch)$"}}`)},
			},
		},
		&v1alpha1.ClusterTemplate{
			ObjectMeta: metav1.ObjectMeta{Name: name + "-app"},
			Spec: v1alpha1.TemplateSpec{
				Params: []v1alpha1.TemplateParam{{Name: "replicas", Default: apiextensionsv1.JSON{Raw: []byte("2")}}},
				Template: harness.RawTemplate(t, `{
					"apiVersion": "v1", "kind": "ConfigMap",
					"metadata": {"name": "$(workload.metadata.name)$-app", "labels": {"app": "$(workload.metadata.name)$"}},
					"data": {"source": "$(source.url)$@$(source.revision)$", "replicas": "$(params.replicas)$ replicas"}}`),
			},
		},
		&v1alpha1.ClusterSupplyChain{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: v1alpha1.ClusterSupplyChainSpec{
				OwnerSelector: v1alpha1.OwnerSelector{Selector: map[string]string{"test.surveyor.dev/case": name}},
				Resources: []v1alpha1.SupplyChainResource{
					{Name: "source", TemplateRef: v1alpha1.SupplyChainTemplateReference{Kind: v1alpha1.KindClusterSourceTemplate, Name: name + "-source"}},
					{Name: "app", TemplateRef: v1alpha1.SupplyChainTemplateReference{Kind: v1alpha1.KindClusterTemplate, Name: name + "-app"},
						Sources: []v1alpha1.ResourceReference{{Name: "source", Resource: "source"}}},
				},
			},
		},
	)
	wl := &v1alpha1.Workload{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns, Labels: map[string]string{"test.surveyor.dev/case": name}},
		Spec: v1alpha1.WorkloadSpec{
			ServiceAccountName: "stamper",
			Source:             &v1alpha1.Source{Git: &v1alpha1.GitSource{URL: "https://example.com/app.git", Ref: &v1alpha1.GitRef{Branch: "main"}}},
		},
	}
	env.CreateAll(ctx, t, wl)
	waitReady(t, wl)

	app := &corev1.ConfigMap{}
	if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "app-app"}, app); err != nil {
		t.Fatal(err)
	}
	if got, want := app.Data["source"], "https://example.com/app.git@main"; got != want {
		t.Errorf("stamped data.source = %q, want %q", got, want)
	}

	before := writeCounts(t)
	reconciles := reconcileCount(t)
	sc := &v1alpha1.ClusterSupplyChain{}
	for i := range 20 {
		// An unrelated annotation re-queues the supply chain's Workloads without
		// changing anything they stamp.
		if err := k8sClient.Get(ctx, client.ObjectKey{Name: name}, sc); err != nil {
			t.Fatal(err)
		}
		patch := client.MergeFrom(sc.DeepCopy())
		metav1.SetMetaDataAnnotation(&sc.ObjectMeta, "test.surveyor.dev/touch", fmt.Sprint(i))
		if err := k8sClient.Patch(ctx, sc, patch); err != nil {
			t.Fatal(err)
		}
		want := reconciles + float64(i+1)
		eventually(t, 30*time.Second, func() (bool, string) {
			got := reconcileCount(t)
			return got >= want, fmt.Sprintf("workload reconciles = %v, want >= %v", got, want)
		})
	}
	after := writeCounts(t)
	for _, key := range []string{"configmaps", "workloads", "workloads/status"} {
		if d := after[key] - before[key]; d != 0 {
			t.Errorf("%s: %v writes during 20 forced reconciles of a converged workload, want 0", key, d)
		}
	}
	t.Logf("forced %v workload reconciles; writes before=%v after=%v", reconcileCount(t)-reconciles, before, after)
}

// grantStamping creates a ServiceAccount allowed to write the given core resources
// in the namespace.
func grantStamping(t *testing.T, ns, sa string, resources ...string) {
	t.Helper()
	env.CreateAll(ctx, t,
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: ns}},
		&rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: ns},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: resources,
				Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}}},
		},
		&rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: ns},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: sa},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: ns}},
		},
	)
}

// waitReady waits for the Workload's Ready condition to be True at its generation.
func waitReady(t *testing.T, wl *v1alpha1.Workload) {
	t.Helper()
	eventually(t, time.Minute, func() (bool, string) {
		if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(wl), wl); err != nil {
			return false, err.Error()
		}
		c := meta.FindStatusCondition(wl.Status.Conditions, v1alpha1.ConditionReady)
		ok := c != nil && c.Status == metav1.ConditionTrue && wl.Status.ObservedGeneration == wl.Generation
		return ok, fmt.Sprintf("%+v", wl.Status.Conditions)
	})
}

// writeCounts sums the API server's apiserver_request_total for create, update, patch
// and apply (deletes are left out: other tests' namespaces are being emptied), keyed by
// resource[/subresource].
func writeCounts(t *testing.T) map[string]float64 {
	t.Helper()
	httpClient, err := rest.HTTPClientFor(testCluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := httpClient.Get(testCluster.Config.Host + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}
	var parser expfmt.TextParser
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]float64{}
	for _, m := range families["apiserver_request_total"].GetMetric() {
		l := labelMap(m)
		switch l["verb"] {
		case "CREATE", "UPDATE", "PATCH", "APPLY":
		default:
			continue
		}
		key := l["resource"]
		if l["subresource"] != "" {
			key += "/" + l["subresource"]
		}
		counts[key] += m.GetCounter().GetValue()
	}
	return counts
}

// reconcileCount is how many times the in-process workload controller reconciled.
func reconcileCount(t *testing.T) float64 {
	t.Helper()
	families, err := crmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var n float64
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			if labelMap(m)["controller"] == "workload" {
				n += m.GetCounter().GetValue()
			}
		}
	}
	return n
}

func labelMap(m *dto.Metric) map[string]string {
	l := map[string]string{}
	for _, p := range m.GetLabel() {
		l[p.GetName()] = strings.Clone(p.GetValue())
	}
	return l
}
