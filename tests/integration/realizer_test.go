package integration

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
	forced := env.ForceReconciles(ctx, t, name, client.ObjectKeyFromObject(wl), 20)
	after := writeCounts(t)
	for _, key := range []string{"configmaps", "workloads", "workloads/status"} {
		if d := after[key] - before[key]; d != 0 {
			t.Errorf("%s: %v writes during 20 forced reconciles of a converged workload, want 0", key, d)
		}
	}
	t.Logf("forced %d reconciles of the workload; writes before=%v after=%v", forced, before, after)
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
	counts := map[string]float64{}
	for _, m := range env.APIServerMetrics(t)["apiserver_request_total"].GetMetric() {
		switch harness.Label(m, "verb") {
		case "CREATE", "UPDATE", "PATCH", "APPLY":
		default:
			continue
		}
		key := harness.Label(m, "resource")
		if sub := harness.Label(m, "subresource"); sub != "" {
			key += "/" + sub
		}
		counts[key] += m.GetCounter().GetValue()
	}
	return counts
}
