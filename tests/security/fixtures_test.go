package security

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// caseLabel selects a test's Workloads into its own supply chain.
const caseLabel = "test.surveyor.dev/case"

// newNamespace creates a namespace that is deleted after the test.
func newNamespace(t *testing.T, prefix string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}
	if err := k8s.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k8s.Delete(ctx, ns) })
	return ns.Name
}

// serviceAccount creates a ServiceAccount in ns, bound (if resources are given) to a
// Role that may do anything to those core resources in ns, and nowhere else.
func serviceAccount(t *testing.T, ns, name string, resources ...string) {
	t.Helper()
	env.CreateAll(ctx, t, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}})
	if len(resources) == 0 {
		return
	}
	env.CreateAll(ctx, t,
		&rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: resources,
				Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}}},
		},
		&rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: ns}},
		},
	)
}

// chain creates a supply chain named name with the given resources, stamping as sa (nil:
// the Workload's own account), and selecting Workloads labelled caseLabel=name.
func chain(t *testing.T, name string, sa *v1alpha1.ServiceAccountRef, resources ...v1alpha1.SupplyChainResource) {
	t.Helper()
	env.CreateAll(ctx, t, &v1alpha1.ClusterSupplyChain{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.ClusterSupplyChainSpec{
			OwnerSelector:     v1alpha1.OwnerSelector{Selector: map[string]string{caseLabel: name}},
			ServiceAccountRef: sa,
			Resources:         resources,
		},
	})
}

// resource is a supply-chain resource using template kind/name.
func resource(name, kind, template string) v1alpha1.SupplyChainResource {
	return v1alpha1.SupplyChainResource{Name: name, TemplateRef: v1alpha1.SupplyChainTemplateReference{Kind: kind, Name: template}}
}

// workload creates a Workload in ns for the supply chain chainName, stamping as sa
// ("" leaves spec.serviceAccountName unset).
func workload(t *testing.T, ns, name, chainName, sa string, params ...v1alpha1.OwnerParam) *v1alpha1.Workload {
	t.Helper()
	wl := &v1alpha1.Workload{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{caseLabel: chainName}},
		Spec: v1alpha1.WorkloadSpec{
			ServiceAccountName: sa,
			Params:             params,
			Source:             &v1alpha1.Source{Git: &v1alpha1.GitSource{URL: "https://example.com/" + name + ".git"}},
		},
	}
	env.CreateAll(ctx, t, wl)
	return wl
}

// waitCondition waits until the Workload's condition of type condType (on the owner
// when resource is "", else on that resource) satisfies ok, and returns the Workload.
func waitCondition(t *testing.T, wl *v1alpha1.Workload, resource, condType string, timeout time.Duration, ok func(*metav1.Condition) bool) *v1alpha1.Workload {
	t.Helper()
	got := &v1alpha1.Workload{}
	eventually(t, timeout, func() (bool, string) {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(wl), got); err != nil {
			return false, err.Error()
		}
		c := findCondition(got, resource, condType)
		if c == nil || got.Status.ObservedGeneration != got.Generation {
			return false, fmt.Sprintf("no current %s condition on %q; status: %+v", condType, resource, got.Status)
		}
		return ok(c), fmt.Sprintf("%s on %q: %s %s %q", condType, resource, c.Status, c.Reason, c.Message)
	})
	return got
}

// findCondition is the owner's (resource "") or a resource's condition of type condType.
func findCondition(wl *v1alpha1.Workload, resource, condType string) *metav1.Condition {
	if resource == "" {
		return meta.FindStatusCondition(wl.Status.Conditions, condType)
	}
	for _, r := range wl.Status.Resources {
		if r.Name == resource {
			return meta.FindStatusCondition(r.Conditions, condType)
		}
	}
	return nil
}

// is returns a condition predicate for a status and reason.
func is(status metav1.ConditionStatus, reason string) func(*metav1.Condition) bool {
	return func(c *metav1.Condition) bool { return c.Status == status && c.Reason == reason }
}

// stampedFor counts the objects of list's kind that carry the Workload's labels, in any
// namespace (or none, for a cluster-scoped kind).
func stampedFor(t *testing.T, list client.ObjectList, wl *v1alpha1.Workload) int {
	t.Helper()
	if err := k8s.List(ctx, list, client.MatchingLabels{
		v1alpha1.LabelWorkloadName: wl.Name, v1alpha1.LabelWorkloadNamespace: wl.Namespace,
	}); err != nil {
		t.Fatal(err)
	}
	return meta.LenList(list)
}
