package security

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// A revision stamps only for its own blueprint (DESIGN §12). Two supply chains with a
// rolloutStrategy: "admin", which stamps a ConfigMap as a powerful ServiceAccount, and
// "team", which the Workload selects. Someone who may only update workloads/status pins the
// Workload to admin's revision; then someone who may create revisions replaces team's own
// revision with a forged one under its name (admin's content, relabelled and owned as
// team's). Neither stamps anything of admin's: the Workload says RevisionNotTrusted, and
// the blueprint reconciler does not adopt the forged object (a Warning event on team).
func TestForeignRevisionStampsNothing(t *testing.T) {
	ns := newNamespace(t, "sec-rev")
	const team, admin = "sec-rev-team", "sec-rev-admin"
	serviceAccount(t, ns, "stamper", "configmaps")
	serviceAccount(t, ns, "powerful", "configmaps", "secrets")
	env.CreateAll(ctx, t, configMapTemplate(t, team), configMapTemplate(t, admin))
	paused := &v1alpha1.RolloutStrategy{Type: v1alpha1.RolloutAll, Paused: true}
	for _, sc := range []*v1alpha1.ClusterSupplyChain{
		rolloutChain(team, paused, nil, resource("app", v1alpha1.KindClusterTemplate, team)),
		rolloutChain(admin, paused, &v1alpha1.ServiceAccountRef{Name: "powerful", Namespace: ns}, resource("app", v1alpha1.KindClusterTemplate, admin)),
	} {
		env.CreateAll(ctx, t, sc)
	}
	adminRev := targetRevision(t, admin)
	teamRev := targetRevision(t, team)
	wl := workload(t, ns, "app", team, "stamper")
	got := waitCondition(t, wl, "", v1alpha1.ConditionReady, time.Minute, is(metav1.ConditionTrue, v1alpha1.ReasonReady))
	if got.Status.BlueprintRevision != teamRev {
		t.Fatalf("workload runs revision %q, want %q", got.Status.BlueprintRevision, teamRev)
	}

	// A user who may update workloads/status and nothing else.
	env.CreateAll(ctx, t,
		&rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Name: "status-writer", Namespace: ns},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{v1alpha1.GroupVersion.Group}, Resources: []string{"workloads", "workloads/status"},
				Verbs: []string{"get", "update", "patch"}}},
		},
		&rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "status-writer", Namespace: ns},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "status-writer"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: "mallory"}},
		})
	cfg := rest.CopyConfig(env.Cluster.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "mallory"}
	mallory, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	pinTo := func(who client.Client, rev string) {
		t.Helper()
		env.Eventually(ctx, t, 30*time.Second, func() (bool, string) {
			cur := &v1alpha1.Workload{}
			if err := who.Get(ctx, client.ObjectKeyFromObject(wl), cur); err != nil {
				return false, err.Error()
			}
			patch := client.MergeFromWithOptions(cur.DeepCopy(), client.MergeFromWithOptimisticLock{})
			cur.Status.BlueprintRevision = rev
			cur.Status.Rollout = &v1alpha1.OwnerRolloutStatus{Revision: rev, State: v1alpha1.RolloutProgressing, LastTransitionTime: metav1.Now()}
			if err := who.Status().Patch(ctx, cur, patch); err != nil {
				return false, err.Error()
			}
			return true, ""
		})
	}
	notTrusted := func(why string) func(*metav1.Condition) bool {
		return func(c *metav1.Condition) bool {
			return c.Status == metav1.ConditionFalse && c.Reason == v1alpha1.ReasonRevisionNotTrusted && strings.Contains(c.Message, why)
		}
	}

	// 1. Another blueprint's revision, written into the status by a status writer.
	pinTo(mallory, adminRev)
	got = waitCondition(t, wl, "", v1alpha1.ConditionSupplyChainReady, time.Minute, notTrusted("it is a revision of ClusterSupplyChain ["+admin+"]"))
	t.Logf("SupplyChainReady: %s", findCondition(got, "", v1alpha1.ConditionSupplyChainReady).Message)
	if c := findCondition(got, "", v1alpha1.ConditionReady); c == nil || c.Reason != v1alpha1.ReasonRevisionNotTrusted {
		t.Errorf("Ready = %+v, want it to carry RevisionNotTrusted", c)
	}
	assertNothingOf(t, ns, admin)

	// 2. A forged object under team's own revision name: admin's content, relabelled and
	// owned as team's, and the Workload pinned back to that name.
	forged := &v1alpha1.BlueprintRevision{}
	if err := k8s.Get(ctx, client.ObjectKey{Name: adminRev}, forged); err != nil {
		t.Fatal(err)
	}
	teamObj := &v1alpha1.ClusterSupplyChain{}
	if err := k8s.Get(ctx, client.ObjectKey{Name: team}, teamObj); err != nil {
		t.Fatal(err)
	}
	genuine := &v1alpha1.BlueprintRevision{}
	if err := k8s.Get(ctx, client.ObjectKey{Name: teamRev}, genuine); err != nil {
		t.Fatal(err)
	}
	if err := k8s.Delete(ctx, genuine); err != nil {
		t.Fatal(err)
	}
	env.Eventually(ctx, t, 30*time.Second, func() (bool, string) {
		err := k8s.Get(ctx, client.ObjectKey{Name: teamRev}, &v1alpha1.BlueprintRevision{})
		return apierrors.IsNotFound(err), "the real revision is still there"
	})
	forged.ObjectMeta = metav1.ObjectMeta{
		Name:            teamRev,
		Labels:          map[string]string{v1alpha1.LabelBlueprintKind: v1alpha1.KindClusterSupplyChain, v1alpha1.LabelBlueprintName: team},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: v1alpha1.GroupVersion.String(), Kind: v1alpha1.KindClusterSupplyChain, Name: team, UID: teamObj.UID}},
	}
	forged.Spec.Blueprint.Name = team
	if err := k8s.Create(ctx, forged); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k8s.Delete(ctx, forged) })
	pinTo(mallory, teamRev)
	got = waitCondition(t, wl, "", v1alpha1.ConditionSupplyChainReady, time.Minute, notTrusted("does not match its hash and name"))
	t.Logf("SupplyChainReady: %s", findCondition(got, "", v1alpha1.ConditionSupplyChainReady).Message)

	// The blueprint reconciler, deciding again, meets the forged object under the name of its
	// revision and does not adopt it.
	env.ForceReconciles(ctx, t, team, client.ObjectKeyFromObject(wl), 1)
	env.Eventually(ctx, t, 30*time.Second, func() (bool, string) {
		var events corev1.EventList
		if err := k8s.List(ctx, &events); err != nil {
			return false, err.Error()
		}
		for _, e := range events.Items {
			if e.InvolvedObject.Kind == v1alpha1.KindClusterSupplyChain && e.InvolvedObject.Name == team &&
				e.Reason == v1alpha1.ReasonRevisionNotTrusted && e.Type == corev1.EventTypeWarning {
				t.Logf("event on %s: %s", team, e.Message)
				return true, ""
			}
		}
		return false, "no RevisionNotTrusted event on " + team
	})
	waitCondition(t, wl, "", v1alpha1.ConditionSupplyChainReady, time.Minute, notTrusted("does not match its hash and name"))
	if sc := (&v1alpha1.ClusterSupplyChain{}); k8s.Get(ctx, client.ObjectKey{Name: team}, sc) == nil && sc.Status.Rollout != nil {
		t.Logf("%s rollout: target %s, stable %s", team, sc.Status.Rollout.TargetRevision, sc.Status.Rollout.StableRevision)
	}
	assertNothingOf(t, ns, admin)
}

// rolloutChain is a supply chain like chain's, with a rolloutStrategy.
func rolloutChain(name string, strategy *v1alpha1.RolloutStrategy, sa *v1alpha1.ServiceAccountRef, resources ...v1alpha1.SupplyChainResource) *v1alpha1.ClusterSupplyChain {
	return &v1alpha1.ClusterSupplyChain{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.ClusterSupplyChainSpec{
			OwnerSelector:     v1alpha1.OwnerSelector{Selector: map[string]string{caseLabel: name}},
			ServiceAccountRef: sa,
			RolloutStrategy:   strategy,
			Resources:         resources,
		},
	}
}

// targetRevision waits for the supply chain's first revision and returns its name.
func targetRevision(t *testing.T, name string) string {
	t.Helper()
	var rev string
	env.Eventually(ctx, t, time.Minute, func() (bool, string) {
		sc := &v1alpha1.ClusterSupplyChain{}
		if err := k8s.Get(ctx, client.ObjectKey{Name: name}, sc); err != nil {
			return false, err.Error()
		}
		if sc.Status.Rollout != nil {
			rev = sc.Status.Rollout.TargetRevision
		}
		return rev != "", "no target revision on " + name
	})
	return rev
}

// assertNothingOf fails if anything stamped from the template named template exists in
// ns, now or in the next few seconds. The Workload's condition is written by the reconcile
// that would have stamped it, so the window only has to cover the cache's lag.
func assertNothingOf(t *testing.T, ns, template string) {
	t.Helper()
	env.Consistently(ctx, t, 3*time.Second, 500*time.Millisecond, func() (bool, string) {
		var cms corev1.ConfigMapList
		if err := k8s.List(ctx, &cms, client.InNamespace(ns), client.MatchingLabels{v1alpha1.LabelClusterTemplateName: template}); err != nil {
			return false, err.Error()
		}
		var names []string
		for _, cm := range cms.Items {
			names = append(names, cm.Name)
		}
		return len(names) == 0, "stamped from " + template + ": " + strings.Join(names, ", ")
	})
}
