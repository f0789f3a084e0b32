package integration

import (
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"

	"github.com/surveyor-dev/surveyor/internal/harness"
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

	assertZeroWrites(t, name, wl, "configmaps")
}

// A converged Workload costs nothing even when the API server stores its stamped
// objects differently from how the templates wrote them: a Deployment's resource
// quantities are canonicalised (1000m is stored as "1", the number 0.5 as "500m",
// 1024Mi as "1Gi") and its empty env and pod annotations dropped, and a Service's
// ports, type, sessionAffinity and clusterIP are defaulted.
func TestRealizerConvergedWorkloadCostsZeroWritesWhenTheServerNormalises(t *testing.T) {
	ns := newNamespace(t)
	grantStamping(t, ns, "stamper", "deployments.apps", "services")
	name := "zero-writes-normalised"
	env.CreateAll(ctx, t,
		&v1alpha1.ClusterTemplate{
			ObjectMeta: metav1.ObjectMeta{Name: name + "-deployment"},
			Spec: v1alpha1.TemplateSpec{Template: harness.RawTemplate(t, `{
				"apiVersion": "apps/v1", "kind": "Deployment",
				"metadata": {"name": "$(workload.metadata.name)$", "labels": {}},
				"spec": {
					"selector": {"matchLabels": {"app": "$(workload.metadata.name)$"}},
					"template": {
						"metadata": {"labels": {"app": "$(workload.metadata.name)$"}, "annotations": {}},
						"spec": {"containers": [{
							"name": "workload", "image": "registry.example.com/app:1",
							"args": null, "env": [],
							"ports": [{"containerPort": 8080}],
							"resources": {"limits": {"cpu": "1000m", "memory": "1Gi"}, "requests": {"cpu": 0.5, "memory": "1024Mi"}}
						}]}
					}
				}}`)},
		},
		&v1alpha1.ClusterTemplate{
			ObjectMeta: metav1.ObjectMeta{Name: name + "-service"},
			Spec: v1alpha1.TemplateSpec{Template: harness.RawTemplate(t, `{
				"apiVersion": "v1", "kind": "Service",
				"metadata": {"name": "$(workload.metadata.name)$"},
				"spec": {"selector": {"app": "$(workload.metadata.name)$"}, "ports": [{"port": 80}]}}`)},
		},
		&v1alpha1.ClusterSupplyChain{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: v1alpha1.ClusterSupplyChainSpec{
				OwnerSelector: v1alpha1.OwnerSelector{Selector: map[string]string{"test.surveyor.dev/case": name}},
				Resources: []v1alpha1.SupplyChainResource{
					{Name: "deployment", TemplateRef: v1alpha1.SupplyChainTemplateReference{Kind: v1alpha1.KindClusterTemplate, Name: name + "-deployment"}},
					{Name: "service", TemplateRef: v1alpha1.SupplyChainTemplateReference{Kind: v1alpha1.KindClusterTemplate, Name: name + "-service"}},
				},
			},
		},
	)
	wl := &v1alpha1.Workload{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns, Labels: map[string]string{"test.surveyor.dev/case": name}},
		Spec:       v1alpha1.WorkloadSpec{ServiceAccountName: "stamper", Image: "registry.example.com/app:1"},
	}
	env.CreateAll(ctx, t, wl)
	waitReady(t, wl)

	// The templates have no health rule, so the Workload is Ready without the
	// Deployment's status; wait for kube-controller-manager to have seen the
	// Deployment so that its own writes settle before the count starts.
	deployment := &appsv1.Deployment{}
	eventually(t, time.Minute, func() (bool, string) {
		if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "app"}, deployment); err != nil {
			return false, err.Error()
		}
		return deployment.Status.ObservedGeneration == deployment.Generation,
			fmt.Sprintf("observedGeneration %d, generation %d", deployment.Status.ObservedGeneration, deployment.Generation)
	})
	if got, want := deployment.Spec.Template.Spec.Containers[0].Resources.Limits.Cpu().String(), "1"; got != want {
		t.Errorf("stored limits.cpu = %q, want %q (the API server's canonical form)", got, want)
	}
	service := &corev1.Service{}
	if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "app"}, service); err != nil {
		t.Fatal(err)
	}
	if service.Spec.Type != corev1.ServiceTypeClusterIP || service.Spec.Ports[0].Protocol != corev1.ProtocolTCP {
		t.Errorf("stored Service spec = %+v, want type and protocol defaulted", service.Spec)
	}

	assertZeroWrites(t, name, wl, "deployments", "services")
}

// assertZeroWrites forces 20 reconciles of the converged Workload wl of the supply
// chain and fails the test if the API server counted any write to wl, its status or
// the stamped resources meanwhile.
func assertZeroWrites(t *testing.T, supplyChain string, wl *v1alpha1.Workload, stamped ...string) {
	t.Helper()
	before := writeCounts(t)
	forced := env.ForceReconciles(ctx, t, supplyChain, client.ObjectKeyFromObject(wl), 20)
	after := writeCounts(t)
	for _, key := range append([]string{"workloads", "workloads/status"}, stamped...) {
		if d := after[key] - before[key]; d != 0 {
			t.Errorf("%s: %v writes during 20 forced reconciles of a converged workload, want 0", key, d)
		}
	}
	t.Logf("forced %d reconciles of the workload; writes before=%v after=%v", forced, before, after)
}

// grantStamping creates a ServiceAccount allowed to write the given resources in the
// namespace: "configmaps" is a core resource, "deployments.apps" one of group apps.
func grantStamping(t *testing.T, ns, sa string, resources ...string) {
	t.Helper()
	verbs := []string{"get", "list", "watch", "create", "update", "patch", "delete"}
	var rules []rbacv1.PolicyRule
	for _, r := range resources {
		resource, group, _ := strings.Cut(r, ".")
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{group}, Resources: []string{resource}, Verbs: verbs})
	}
	env.CreateAll(ctx, t,
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: ns}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: ns}, Rules: rules},
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
