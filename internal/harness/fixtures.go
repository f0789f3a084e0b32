package harness

import (
	"context"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/internal/managers"
	cartov1alpha1 "github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// LeaseName is the controller's leader-election lease (managers.ClusterLease), in
// ControllerNamespace.
const LeaseName = managers.ClusterLease

// Lease reads the controller's leader-election lease with c.
func Lease(ctx context.Context, t testing.TB, c client.Client) *coordinationv1.Lease {
	t.Helper()
	l := &coordinationv1.Lease{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ControllerNamespace, Name: LeaseName}, l); err != nil {
		t.Fatal(err)
	}
	return l
}

// StamperNamespace creates, with c, a namespace named after prefix holding a ServiceAccount sa
// that may write ConfigMaps there and nowhere else, and deletes the namespace after the test
// (without waiting: the namespace controller empties it in the background).
func (e *Env) StamperNamespace(ctx context.Context, t testing.TB, c client.Client, prefix, sa string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}
	if err := c.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, ns) })
	e.CreateAll(ctx, t, Stamper(ns.Name, sa, "configmaps")...)
	return ns.Name
}

// Stamper is a ServiceAccount sa in ns and a Role, bound to it, that may read and write
// the core kinds resources (plurals) in ns and nothing else: an account a supply chain
// stamps as.
func Stamper(ns, sa string, resources ...string) []client.Object {
	return []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: ns}},
		&rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: ns},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: resources,
				Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}}},
		},
		&rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: ns},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: sa},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: ns}},
		},
	}
}

// FastClient is an admin client with a QPS high enough to create hundreds of Workloads quickly,
// whose requests give up after 20 s (so that one made while kube-apiserver is down cannot hang).
func (e *Env) FastClient() (client.Client, error) {
	cfg := rest.CopyConfig(e.Cluster.Config)
	cfg.QPS, cfg.Burst = 200, 400
	cfg.Timeout = 20 * time.Second
	return client.New(cfg, client.Options{Scheme: e.Scheme})
}

// CaseLabel selects a test's owners into its own supply chain.
const CaseLabel = "test.surveyor.dev/case"

// ConfigMapChain is a supply chain named name of two ConfigMap templates: "config" (a
// ClusterConfigTemplate named name-config whose output is the Workload's git URL) and
// "app" (a ClusterTemplate named name-app consuming it, ConfigMapApp with appData). It
// selects Workloads labelled CaseLabel=name.
func ConfigMapChain(t testing.TB, name, appData string) []client.Object {
	t.Helper()
	return []client.Object{
		&cartov1alpha1.ClusterConfigTemplate{
			ObjectMeta: metav1.ObjectMeta{Name: name + "-config"},
			Spec: cartov1alpha1.ClusterConfigTemplateSpec{
				ConfigPath: ".data.config",
				TemplateSpec: cartov1alpha1.TemplateSpec{Template: RawTemplate(t, `{
					"apiVersion": "v1", "kind": "ConfigMap",
					"metadata": {"name": "$(workload.metadata.name)$-config"},
					"data": {"config": "$(workload.spec.source.git.url)$"}}`)},
			},
		},
		&cartov1alpha1.ClusterTemplate{
			ObjectMeta: metav1.ObjectMeta{Name: name + "-app"},
			Spec:       cartov1alpha1.TemplateSpec{Template: ConfigMapApp(t, appData)},
		},
		ConfigMapSupplyChain(name),
	}
}

// ConfigMapApp is the template of ConfigMapChain's "app" resource: a ConfigMap named
// after the Workload with data.source its config input and the further data fields
// appData (JSON members, e.g. `"mode": "stamped"`).
func ConfigMapApp(t testing.TB, appData string) *cartov1alpha1.TemplateObject {
	t.Helper()
	return RawTemplate(t, `{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": {"name": "$(workload.metadata.name)$-app"},
		"data": {"source": "$(config)$", `+appData+`}}`)
}

// ConfigMapSupplyChain is the supply chain of ConfigMapChain, of the templates name-config
// and name-app.
func ConfigMapSupplyChain(name string) *cartov1alpha1.ClusterSupplyChain {
	return &cartov1alpha1.ClusterSupplyChain{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: cartov1alpha1.ClusterSupplyChainSpec{
			OwnerSelector: cartov1alpha1.OwnerSelector{Selector: map[string]string{CaseLabel: name}},
			Resources: []cartov1alpha1.SupplyChainResource{
				{Name: "config", TemplateRef: cartov1alpha1.SupplyChainTemplateReference{Kind: cartov1alpha1.KindClusterConfigTemplate, Name: name + "-config"}},
				{Name: "app", TemplateRef: cartov1alpha1.SupplyChainTemplateReference{Kind: cartov1alpha1.KindClusterTemplate, Name: name + "-app"},
					Configs: []cartov1alpha1.ResourceReference{{Name: "config", Resource: "config"}}},
			},
		},
	}
}
