package faults

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// Status is not proof of what an owner stamped (DESIGN §12): whoever can write a
// Workload's status can list any object in status.pendingDeletions, and the controller
// deletes only what the Workload controls. Here the stamper ServiceAccount may delete every
// ConfigMap of its namespace and, wrongly, Namespaces; the Workload's status is forged to
// list another team's ConfigMap and a Namespace. The controller drops both entries, and
// both objects are still there, not being deleted, as is the Workload's own ConfigMap.
func TestPruneForgedPendingDeletionsDeleteNothing(t *testing.T) {
	const chain = "faults-forged"
	ns := newNamespace(t, chain)
	grant(t, ns, "configmaps-all", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"*"}})
	victim := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns + "-victim"}}
	teamB := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "team-b"}, Data: map[string]string{"owner": "team-b"}}
	env.CreateAll(ctx, t, victim, teamB,
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: ns + "-namespaces"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get", "delete"}}}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: ns + "-namespaces"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: ns + "-namespaces"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: stamper, Namespace: ns}}},
		chainTemplate(t, chain+"-config", `{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": {"name": "$(workload.metadata.name)$-config"}, "data": {"source": "$(workload.spec.source.git.url)$"}}`),
		templatesChain(chain, "config"),
	)
	c := launchController(t, "surveyor-forged")
	c.waitLeader(t, 2*time.Minute)
	wl := newWorkload(ns, chain, 0)
	env.CreateAll(ctx, t, wl)
	waitAllReady(t, ns, 1, 2*time.Minute)

	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		got := workload(t, ns, wl.Name)
		got.Status.PendingDeletions = []v1alpha1.PendingDeletion{
			{Resource: "config", StampedRef: v1alpha1.StampedRef{APIVersion: "v1", Kind: "ConfigMap", Namespace: ns, Name: teamB.Name}, Since: metav1.Now()},
			{Resource: "config", StampedRef: v1alpha1.StampedRef{APIVersion: "v1", Kind: "Namespace", Name: victim.Name}, Since: metav1.Now()},
		}
		return k8s.Status().Update(ctx, got)
	})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*time.Minute, func() (bool, string) {
		got := workload(t, ns, wl.Name)
		if why := readyExactly(got); why != "" {
			return false, why
		}
		return len(got.Status.PendingDeletions) == 0, fmt.Sprintf("pendingDeletions %+v, want none", got.Status.PendingDeletions)
	})
	for _, o := range []client.Object{teamB, victim, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: wl.Name + "-config"}}} {
		key := client.ObjectKeyFromObject(o)
		if err := k8s.Get(ctx, key, o); err != nil {
			t.Errorf("%T %s: %v", o, key, err)
		} else if o.GetDeletionTimestamp() != nil {
			t.Errorf("%T %s is being deleted", o, key)
		}
	}
}
