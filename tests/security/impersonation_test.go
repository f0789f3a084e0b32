package security

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/internal/harness"
	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// retryWindow is how long a test watches for a retry that must not come.
const retryWindow = 5 * time.Second

// configMapTemplate is a ClusterTemplate stamping one ConfigMap per Workload.
func configMapTemplate(t *testing.T, name string) *v1alpha1.ClusterTemplate {
	return &v1alpha1.ClusterTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.TemplateSpec{Template: harness.RawTemplate(t, `{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": {"name": "$(workload.metadata.name)$-cm"},
			"data": {"url": "$(workload.spec.source.git.url)$"}}`)},
	}
}

// A Workload stamps as its ServiceAccount. An account with no RoleBinding, an account
// that does not exist in the Workload's namespace (here the controller's own account
// name, which must not lend the controller's identity) and the namespace's default
// account all get the API server's denial in ResourcesSubmitted, and nothing is created.
func TestStampingWithoutRightsCreatesNothing(t *testing.T) {
	ns := newNamespace(t, "sec-norights")
	const name = "sec-norights"
	env.CreateAll(ctx, t, configMapTemplate(t, name))
	chain(t, name, nil, resource("cm", v1alpha1.KindClusterTemplate, name))
	serviceAccount(t, ns, "nobody")

	for _, tc := range []struct{ workload, serviceAccount, user string }{
		{"unbound", "nobody", "nobody"},
		{"borrows-controller", harness.ControllerAccount, harness.ControllerAccount},
		{"default", "", "default"},
	} {
		t.Run(tc.workload, func(t *testing.T) {
			wl := workload(t, ns, tc.workload, name, tc.serviceAccount)
			user := fmt.Sprintf("system:serviceaccount:%s:%s", ns, tc.user)
			got := waitCondition(t, wl, "", v1alpha1.ConditionResourcesSubmitted, time.Minute,
				is(metav1.ConditionFalse, v1alpha1.ReasonTemplateRejectedByAPIServer))
			c := findCondition(got, "", v1alpha1.ConditionResourcesSubmitted)
			want := fmt.Sprintf("User %q cannot patch resource \"configmaps\"", user)
			if !strings.Contains(c.Message, want) {
				t.Errorf("ResourcesSubmitted message %q does not contain the API server's denial %q", c.Message, want)
			}
			if r := findCondition(got, "", v1alpha1.ConditionReady); r == nil || r.Status != metav1.ConditionFalse {
				t.Errorf("Ready = %+v, want False", r)
			}
			if n := stampedFor(t, &corev1.ConfigMapList{}, wl); n != 0 {
				t.Errorf("%d ConfigMaps were stamped for a workload whose account may not create any", n)
			}
		})
	}
}

// Stamped objects always land in the Workload's namespace, so an account's rights in its
// own namespace do not reach any other: a template cannot name a namespace (the CRD
// rejects it), a param cannot smuggle one in (the schema types metadata), and a supply chain that stamps as an
// account of namespace A for a Workload in namespace B stamps into B, where that account
// has no rights.
func TestStampingStaysInWorkloadNamespace(t *testing.T) {
	nsA := newNamespace(t, "sec-ns-a")
	nsB := newNamespace(t, "sec-ns-b")
	serviceAccount(t, nsA, "stamper", "configmaps")

	t.Run("the CRD rejects a template that sets a namespace", func(t *testing.T) {
		tpl := fmt.Sprintf(`{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": {"name": "$(workload.metadata.name)$-cm", "namespace": %q}}`, nsB)
		for _, obj := range []client.Object{
			&v1alpha1.ClusterTemplate{ObjectMeta: metav1.ObjectMeta{Name: "sec-ns-set"}, Spec: v1alpha1.TemplateSpec{Template: harness.RawTemplate(t, tpl)}},
			&v1alpha1.ClusterConfigTemplate{ObjectMeta: metav1.ObjectMeta{Name: "sec-ns-set"}, Spec: v1alpha1.ClusterConfigTemplateSpec{
				ConfigPath: ".data", TemplateSpec: v1alpha1.TemplateSpec{Template: harness.RawTemplate(t, tpl)}}},
			&v1alpha1.ClusterSourceTemplate{ObjectMeta: metav1.ObjectMeta{Name: "sec-ns-set"}, Spec: v1alpha1.ClusterSourceTemplateSpec{
				URLPath: ".data.url", RevisionPath: ".data.rev", TemplateSpec: v1alpha1.TemplateSpec{Template: harness.RawTemplate(t, tpl)}}},
			&v1alpha1.ClusterImageTemplate{ObjectMeta: metav1.ObjectMeta{Name: "sec-ns-set"}, Spec: v1alpha1.ClusterImageTemplateSpec{
				ImagePath: ".data.image", TemplateSpec: v1alpha1.TemplateSpec{Template: harness.RawTemplate(t, tpl)}}},
		} {
			err := k8s.Create(ctx, obj)
			if err == nil {
				_ = k8s.Delete(ctx, obj)
				t.Errorf("%T with metadata.namespace was accepted", obj)
				continue
			}
			if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "template must not set metadata.namespace") {
				t.Errorf("%T with metadata.namespace: %v, want Invalid: template must not set metadata.namespace", obj, err)
			}
		}
	})

	t.Run("a param cannot smuggle in a namespace", func(t *testing.T) {
		// With the whole metadata taken from a param, the CRD's check of
		// template.metadata.namespace could not see a namespace the Workload passes in. The
		// schema must reject metadata that is not an object (an unstructured client sends
		// it as written; the typed client cannot even encode it).
		tpl := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": v1alpha1.GroupVersion.String(), "kind": v1alpha1.KindClusterTemplate,
			"metadata": map[string]any{"name": "sec-ns-param"},
			"spec": map[string]any{
				"params": []any{map[string]any{"name": "meta", "default": map[string]any{"name": "x"}}},
				"template": map[string]any{
					"apiVersion": "v1", "kind": "ConfigMap", "metadata": "$(params.meta)$",
				},
			},
		}}
		err := k8s.Create(ctx, tpl)
		if err == nil {
			_ = k8s.Delete(ctx, tpl)
		}
		if !apierrors.IsInvalid(err) {
			t.Errorf("a ClusterTemplate whose metadata is a $(params.meta)$ tag: err=%v, want Invalid", err)
		}
	})

	t.Run("rights in one namespace do not reach another", func(t *testing.T) {
		const name = "sec-ns-sa"
		env.CreateAll(ctx, t, configMapTemplate(t, name))
		// Every Workload of this supply chain stamps as stamper from namespace A.
		chain(t, name, &v1alpha1.ServiceAccountRef{Name: "stamper", Namespace: nsA}, resource("cm", v1alpha1.KindClusterTemplate, name))

		home := workload(t, nsA, "home", name, "")
		got := waitCondition(t, home, "", v1alpha1.ConditionReady, time.Minute, is(metav1.ConditionTrue, v1alpha1.ReasonReady))
		assertStampedIn(t, got, nsA)

		away := workload(t, nsB, "away", name, "")
		got = waitCondition(t, away, "cm", v1alpha1.ConditionResourceSubmitted, time.Minute,
			is(metav1.ConditionFalse, v1alpha1.ReasonTemplateRejectedByAPIServer))
		c := findCondition(got, "cm", v1alpha1.ConditionResourceSubmitted)
		for _, want := range []string{
			fmt.Sprintf("User %q cannot patch resource \"configmaps\"", "system:serviceaccount:"+nsA+":stamper"),
			fmt.Sprintf("in the namespace %q", nsB),
		} {
			if !strings.Contains(c.Message, want) {
				t.Errorf("ResourceSubmitted message %q does not contain %q", c.Message, want)
			}
		}
		if n := stampedFor(t, &corev1.ConfigMapList{}, away); n != 0 {
			t.Errorf("%d ConfigMaps were stamped for the workload in %s, whose account has rights only in %s", n, nsB, nsA)
		}
	})
}

// assertStampedIn checks that every resource of the Workload stamped into ns and that
// the objects are there.
func assertStampedIn(t *testing.T, wl *v1alpha1.Workload, ns string) {
	t.Helper()
	for _, r := range wl.Status.Resources {
		if r.StampedRef == nil || r.StampedRef.Namespace != ns {
			t.Errorf("resource %s stampedRef %+v, want namespace %s", r.Name, r.StampedRef, ns)
		}
	}
	var list corev1.ConfigMapList
	if n := stampedFor(t, &list, wl); n != len(wl.Status.Resources) {
		t.Errorf("%d ConfigMaps stamped for %s/%s, want %d", n, wl.Namespace, wl.Name, len(wl.Status.Resources))
	}
	for _, cm := range list.Items {
		if cm.Namespace != ns {
			t.Errorf("ConfigMap %s/%s was stamped outside the workload's namespace %s", cm.Namespace, cm.Name, ns)
		}
	}
}

// A template stamping a cluster-scoped kind (a ClusterRole granting everything, or a
// Namespace) is refused even when the Workload's account is cluster-admin: a Workload
// owns objects in its namespace only. The resource says so in ResourceSubmitted, the
// refusal is final (the Workload is not retried) and nothing is created.
func TestClusterScopedKindsAreRefused(t *testing.T) {
	ns := newNamespace(t, "sec-cluster")
	const name = "sec-cluster"
	serviceAccount(t, ns, "admin")
	env.CreateAll(ctx, t, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: ns + "-admin"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "admin", Namespace: ns}},
	})
	env.CreateAll(ctx, t,
		&v1alpha1.ClusterTemplate{
			ObjectMeta: metav1.ObjectMeta{Name: name + "-role"},
			Spec: v1alpha1.TemplateSpec{Template: harness.RawTemplate(t, `{
				"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
				"metadata": {"name": "$(workload.metadata.name)$-escalated"},
				"rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]}`)},
		},
		&v1alpha1.ClusterTemplate{
			ObjectMeta: metav1.ObjectMeta{Name: name + "-namespace"},
			Spec: v1alpha1.TemplateSpec{Template: harness.RawTemplate(t, `{
				"apiVersion": "v1", "kind": "Namespace",
				"metadata": {"name": "$(workload.metadata.name)$-ns"}}`)},
		},
	)
	chain(t, name, nil,
		resource("clusterrole", v1alpha1.KindClusterTemplate, name+"-role"),
		resource("namespace", v1alpha1.KindClusterTemplate, name+"-namespace"))
	created := time.Now()
	wl := workload(t, ns, ns, name, "admin") // named after ns: its stamps would be <ns>-escalated and <ns>-ns

	for _, res := range []string{"clusterrole", "namespace"} {
		got := waitCondition(t, wl, res, v1alpha1.ConditionResourceSubmitted, time.Minute, func(c *metav1.Condition) bool {
			return c.Reason == v1alpha1.ReasonTemplateRejectedByAPIServer
		})
		c := findCondition(got, res, v1alpha1.ConditionResourceSubmitted)
		if !strings.Contains(c.Message, "cluster-scoped") {
			t.Errorf("resource %s: message %q does not say the kind is cluster-scoped", res, c.Message)
		}
		// A cluster-scoped kind is the template's fault and no retry can fix it.
		if c.Status != metav1.ConditionFalse {
			t.Errorf("resource %s: ResourceSubmitted is %s, want False: refusing a cluster-scoped kind is final, not a transient failure", res, c.Status)
		}
	}

	// The reconcile that reported the refusal ended without an error or a requeue, so
	// nothing retries it: no further failed or requeued reconcile of the Workload, and
	// neither object appears. The workqueue retries 50ms, 100ms, 200ms, ... after each
	// failure, so the next retry of a Workload that failed since its creation comes
	// within as long again as that took: a window of twice that (and at least
	// retryWindow) would see it.
	window := max(retryWindow, 2*time.Since(created))
	key := client.ObjectKeyFromObject(wl)
	reported := env.ReconcilesOf("workload", key)
	if reported.Total() == 0 {
		t.Fatalf("no finished reconcile of workload %s was counted although it has a status: the harness no longer recognises controller-runtime's reconcile log lines", key)
	}
	env.Consistently(ctx, t, window, 200*time.Millisecond, func() (bool, string) {
		if r := env.ReconcilesOf("workload", key); r.Failed != reported.Failed || r.Requeued != reported.Requeued {
			return false, fmt.Sprintf("the workload was retried after the refusal: reconciles %+v when the refusal was seen, %+v now", reported, r)
		}
		for _, o := range []client.Object{
			&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: ns + "-escalated"}},
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns + "-ns"}},
		} {
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(o), o); !apierrors.IsNotFound(err) {
				return false, fmt.Sprintf("%T %s: err=%v, want NotFound", o, o.GetName(), err)
			}
		}
		return true, ""
	})
	if n := stampedFor(t, &rbacv1.ClusterRoleList{}, wl) + stampedFor(t, &corev1.NamespaceList{}, wl); n != 0 {
		t.Errorf("%d cluster-scoped objects carry the workload's labels", n)
	}
}
