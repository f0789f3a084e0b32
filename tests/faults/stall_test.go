package faults

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/internal/harness"
	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// stallWorkloads is how many healthy Workloads converge while another kind is broken.
const stallWorkloads = 50

// An APIService that points at nothing takes a stamped kind off the API server after
// Surveyor has learnt its mapping. The Workload stamping that kind reports it
// (ResourceSubmitted=Unknown KindNotServed naming the kind), while 50 Workloads of
// another kind converge, and stay converged, repairing what is deleted under them.
// When the APIService is repaired, the broken Workload recovers without a restart.
func TestBrokenAPIServiceStallsNoOtherWorkload(t *testing.T) {
	const group = "apiservice.faults.example.com"
	ns := newNamespace(t, "faults-apiservice")
	healthyNS := newNamespace(t, "faults-apiservice-healthy")
	installCRD(t, group, "Gadget")
	installCRD(t, group, "Widget")
	allowStamping(t, ns, group)
	kindChain(t, "faults-gadget", group, "Gadget")
	kindChain(t, "faults-widget", group, "Widget")
	configMapChain(t, "faults-healthy")
	c := launchController(t, "surveyor-apiservice")
	c.waitLeader(t, 2*time.Minute)

	// The primer stamps a Gadget while the group is served, so the controller knows the
	// group's kinds, Widget among them, when the group goes away.
	primer := newWorkload(ns, "faults-gadget", 0)
	env.CreateAll(ctx, t, primer)
	waitAllReady(t, ns, 1, 2*time.Minute)

	restore := breakAPIService(t, group)
	broken := newWorkload(ns, "faults-widget", 1)
	env.CreateAll(ctx, t, broken)
	start := time.Now()
	createWorkloads(t, healthyNS, "faults-healthy", 0, stallWorkloads)
	took := waitAllReady(t, healthyNS, stallWorkloads, 2*time.Minute)
	t.Logf("%d workloads of another kind converged in %s while %s/v1 was not served", stallWorkloads, took.Round(time.Millisecond), group)
	waitNotServed(t, ns, []string{broken.Name}, "Widget", group+"/v1", time.Minute)

	// Staying converged: objects deleted under ten of them are stamped again, and every
	// one of them stays Ready throughout, while the broken one still says why.
	for i := range 10 {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: healthyNS, Name: workloadName(i) + "-app"}}
		if err := k8s.Delete(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}
	// 15s spans several 3s sync waits and retries of the broken Workload: a stall
	// behind it would show as healthy Workloads falling out of Ready.
	env.Consistently(ctx, t, 15*time.Second, 250*time.Millisecond, func() (bool, string) {
		if ready, total, err := readiness(healthyNS); err != nil || ready != stallWorkloads {
			return false, fmt.Sprintf("%d of %d healthy workloads ready (err %v)", ready, total, err)
		}
		why := notServed(ns, broken.Name, "Widget", group+"/v1")
		return why == "", why
	})
	eventually(t, time.Minute, func() (bool, string) {
		n := len(stampedConfigMaps(t, healthyNS, "faults-healthy"))
		return n == stallWorkloads*stampsPerWorkload, fmt.Sprintf("%d of %d ConfigMaps stamped", n, stallWorkloads*stampsPerWorkload)
	})
	t.Logf("the deleted objects were stamped again %s after the healthy workloads converged", time.Since(start).Round(time.Millisecond))

	pid := c.Pid()
	restore()
	waitAllReady(t, ns, 2, 3*time.Minute)
	if got := c.Pid(); got != pid {
		t.Fatalf("the controller restarted (pid %d, then %d)", pid, got)
	}
}

// A CRD deleted while Workloads stamp its kind makes them report the kind as not
// served; recreated, they stamp it again and are Ready, all without a restart.
func TestCRDDeletedAndRecreated(t *testing.T) {
	const group = "crd.faults.example.com"
	const n = 5
	ns := newNamespace(t, "faults-crd")
	crd := installCRD(t, group, "Widget")
	allowStamping(t, ns, group)
	kindChain(t, "faults-crd", group, "Widget")
	c := launchController(t, "surveyor-crd")
	c.waitLeader(t, 2*time.Minute)
	createWorkloads(t, ns, "faults-crd", 0, n)
	waitAllReady(t, ns, n, 2*time.Minute)
	pid := c.Pid()

	if err := k8s.Delete(ctx, crd); err != nil {
		t.Fatal(err)
	}
	// kube-apiserver deletes the instances first; when it misses some, it looks again a
	// minute later.
	eventually(t, 3*time.Minute, func() (bool, string) {
		err := k8s.Get(ctx, client.ObjectKeyFromObject(crd), crd.DeepCopy())
		return apierrors.IsNotFound(err), fmt.Sprintf("CRD %s still there (err %v)", crd.GetName(), err)
	})
	names := make([]string, n)
	for i := range names {
		names[i] = workloadName(i)
	}
	waitNotServed(t, ns, names, "Widget", group+"/v1", 2*time.Minute)

	installCRD(t, group, "Widget")
	waitAllReady(t, ns, n, 2*time.Minute)
	widgets := &unstructured.UnstructuredList{}
	widgets.SetAPIVersion(group + "/v1")
	widgets.SetKind("WidgetList")
	if err := k8s.List(ctx, widgets, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(widgets.Items) != n {
		t.Fatalf("%d Widgets stamped after the CRD came back, want %d", len(widgets.Items), n)
	}
	if got := c.Pid(); got != pid {
		t.Fatalf("the controller restarted (pid %d, then %d)", pid, got)
	}
}

// installCRD defines kind (plural kind+"s") in group at v1, namespaced and schemaless,
// waits until it is served, and deletes it after the test.
func installCRD(t *testing.T, group, kind string) *unstructured.Unstructured {
	t.Helper()
	return createCRD(t, newCRD(group, kind))
}

// newCRD is the CRD installCRD installs.
func newCRD(group, kind string) *unstructured.Unstructured {
	plural := strings.ToLower(kind) + "s"
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": plural + "." + group},
		"spec": map[string]any{
			"group": group,
			"scope": "Namespaced",
			"names": map[string]any{"kind": kind, "listKind": kind + "List", "plural": plural, "singular": strings.ToLower(kind)},
			"versions": []any{map[string]any{
				"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
			}},
		},
	}}
}

// createCRD creates crd, waits until it is served, and deletes it after the test.
func createCRD(t testing.TB, crd *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	if err := k8s.Create(ctx, crd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k8s.Delete(ctx, crd.DeepCopy()) })
	eventually(t, time.Minute, func() (bool, string) {
		got := crd.DeepCopy()
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(crd), got); err != nil {
			return false, err.Error()
		}
		return hasTrueCondition(got, "Established"), fmt.Sprintf("CRD %s not established", crd.GetName())
	})
	return crd
}

// hasTrueCondition says whether an unstructured object's status has condition typ True.
func hasTrueCondition(obj *unstructured.Unstructured, typ string) bool {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == typ {
			return m["status"] == "True"
		}
	}
	return false
}

// allowStamping lets the stamper ServiceAccount of ns write every kind of group.
func allowStamping(t testing.TB, ns, group string) {
	t.Helper()
	name := stamper + "-" + group
	env.CreateAll(ctx, t,
		&rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{group}, Resources: []string{"*"}, Verbs: []string{"*"}}},
		},
		&rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: stamper, Namespace: ns}},
		},
	)
}

// kindChain creates a supply chain named name with one resource, named after kind in
// lower case, whose ClusterTemplate stamps one object of kind per Workload. It selects
// Workloads labelled caseLabel=name.
func kindChain(t *testing.T, name, group, kind string) {
	t.Helper()
	kindChainAt(t, name, group+"/v1", kind)
}

// kindChainAt is kindChain stamping kind at apiVersion.
func kindChainAt(t testing.TB, name, apiVersion, kind string) {
	t.Helper()
	resource := strings.ToLower(kind)
	env.CreateAll(ctx, t,
		&v1alpha1.ClusterTemplate{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: v1alpha1.TemplateSpec{Template: harness.RawTemplate(t, fmt.Sprintf(`{
				"apiVersion": "%s", "kind": "%s",
				"metadata": {"name": "$(workload.metadata.name)$"},
				"spec": {"source": "$(workload.spec.source.git.url)$"}}`, apiVersion, kind))},
		},
		&v1alpha1.ClusterSupplyChain{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: v1alpha1.ClusterSupplyChainSpec{
				OwnerSelector: v1alpha1.OwnerSelector{Selector: map[string]string{caseLabel: name}},
				Resources: []v1alpha1.SupplyChainResource{
					{Name: resource, TemplateRef: v1alpha1.SupplyChainTemplateReference{Kind: v1alpha1.KindClusterTemplate, Name: name}},
				},
			},
		},
	)
}

// breakAPIService points the APIService of group's v1 at a Service that does not exist,
// taking the CRD's kinds off the API server, and returns a function that restores it.
// Without its automanaged label, kube-apiserver's autoregister controller leaves it be.
func breakAPIService(t *testing.T, group string) (restore func()) {
	t.Helper()
	const automanaged = "kube-aggregator.kubernetes.io/automanaged"
	svc := &unstructured.Unstructured{}
	svc.SetAPIVersion("apiregistration.k8s.io/v1")
	svc.SetKind("APIService")
	key := client.ObjectKey{Name: "v1." + group}
	update := func(change func(*unstructured.Unstructured), available bool) {
		eventually(t, time.Minute, func() (bool, string) {
			got := svc.DeepCopy()
			if err := k8s.Get(ctx, key, got); err != nil {
				return false, err.Error()
			}
			change(got)
			if err := k8s.Update(ctx, got); err != nil {
				return false, err.Error()
			}
			return true, ""
		})
		eventually(t, time.Minute, func() (bool, string) {
			got := svc.DeepCopy()
			if err := k8s.Get(ctx, key, got); err != nil {
				return false, err.Error()
			}
			return hasTrueCondition(got, "Available") == available, fmt.Sprintf("APIService %s: want Available=%t", key.Name, available)
		})
	}
	update(func(s *unstructured.Unstructured) {
		labels := s.GetLabels()
		delete(labels, automanaged)
		s.SetLabels(labels)
		_ = unstructured.SetNestedMap(s.Object, map[string]any{"namespace": "default", "name": "nothing", "port": int64(443)}, "spec", "service")
		_ = unstructured.SetNestedField(s.Object, true, "spec", "insecureSkipTLSVerify")
	}, false)
	restored := false
	restore = func() {
		if restored {
			return
		}
		restored = true
		update(func(s *unstructured.Unstructured) {
			labels := s.GetLabels()
			if labels == nil {
				labels = map[string]string{}
			}
			labels[automanaged] = "true"
			s.SetLabels(labels)
			unstructured.RemoveNestedField(s.Object, "spec", "service")
			unstructured.RemoveNestedField(s.Object, "spec", "insecureSkipTLSVerify")
		}, true)
	}
	t.Cleanup(restore)
	return restore
}

// notServed says why the named Workload of ns does not report its only resource's kind
// as not served, or "" when it does: ResourceSubmitted=Unknown KindNotServed, naming the
// kind and its group version.
func notServed(ns, name, kind, groupVersion string) string {
	var wl v1alpha1.Workload
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &wl); err != nil {
		return err.Error()
	}
	if len(wl.Status.Resources) != 1 {
		return fmt.Sprintf("workload %s has %d resources in its status, want 1", name, len(wl.Status.Resources))
	}
	res := wl.Status.Resources[0]
	c := meta.FindStatusCondition(res.Conditions, v1alpha1.ConditionResourceSubmitted)
	prefix := fmt.Sprintf("unable to apply object [%s/%s] for resource [%s]: kind [%s] of [%s] is not served: ",
		kind, name, res.Name, kind, groupVersion)
	if c == nil || c.Status != metav1.ConditionUnknown || c.Reason != v1alpha1.ReasonKindNotServed || !strings.HasPrefix(c.Message, prefix) {
		return fmt.Sprintf("workload %s resource [%s]: ResourceSubmitted %s, want Unknown %s %q...", name, res.Name, condString(c), v1alpha1.ReasonKindNotServed, prefix)
	}
	owner := meta.FindStatusCondition(wl.Status.Conditions, v1alpha1.ConditionResourcesSubmitted)
	if owner == nil || owner.Status != metav1.ConditionUnknown || owner.Reason != v1alpha1.ReasonKindNotServed {
		return fmt.Sprintf("workload %s: ResourcesSubmitted %s, want Unknown %s", name, condString(owner), v1alpha1.ReasonKindNotServed)
	}
	return ""
}

// waitNotServed waits until every named Workload of ns reports kind as not served.
func waitNotServed(t testing.TB, ns string, names []string, kind, groupVersion string, timeout time.Duration) {
	t.Helper()
	eventually(t, timeout, func() (bool, string) {
		for _, name := range names {
			if why := notServed(ns, name, kind, groupVersion); why != "" {
				return false, why
			}
		}
		return true, ""
	})
}
