package faults

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/internal/harness"
	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// A stamped object whose delete is skipped, then refused, stays in the owner's
// status.pendingDeletions until it is deleted (DESIGN §3.8; STYLE, "a write that failed is
// remembered until it succeeds"):
//   - the Workload's Widget resource leaves its supply chain while a new resource (a
//     Secret) is denied: the pass is not clean, so nothing is pruned, and the Widget is
//     listed, waiting;
//   - the Secret is allowed: the pass is clean, the Widget's delete is denied by RBAC, and
//     it is listed with the API server's answer, and a Warning names it, while the Workload
//     is Ready (a pending deletion changes no condition);
//   - its delete is allowed: the Widget is deleted and the list is empty.
func TestPruneSkippedOrDeniedStaysInStatusUntilDeleted(t *testing.T) {
	const group = "prune.faults.example.com"
	const chain = "faults-prune"
	ns := newNamespace(t, chain)
	installCRD(t, group, "Widget")
	// The stamper may do everything to Widgets but delete them.
	grant(t, ns, "widgets-no-delete", rbacv1.PolicyRule{APIGroups: []string{group}, Resources: []string{"widgets"},
		Verbs: []string{"get", "list", "watch", "create", "update", "patch"}})
	env.CreateAll(ctx, t,
		chainTemplate(t, chain+"-widget", `{"apiVersion": "`+group+`/v1", "kind": "Widget",
			"metadata": {"name": "$(workload.metadata.name)$"}, "spec": {"source": "$(workload.spec.source.git.url)$"}}`),
		chainTemplate(t, chain+"-config", `{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": {"name": "$(workload.metadata.name)$-config"}, "data": {"source": "$(workload.spec.source.git.url)$"}}`),
		chainTemplate(t, chain+"-secret", `{"apiVersion": "v1", "kind": "Secret",
			"metadata": {"name": "$(workload.metadata.name)$-secret"}, "stringData": {"token": "not-a-real-one"}}`),
		templatesChain(chain, "widget", "config"),
	)
	c := launchController(t, "surveyor-prune")
	c.waitLeader(t, 2*time.Minute)
	wl := newWorkload(ns, chain, 0)
	env.CreateAll(ctx, t, wl)
	waitAllReady(t, ns, 1, 2*time.Minute)
	widget := &unstructured.Unstructured{}
	widget.SetAPIVersion(group + "/v1")
	widget.SetKind("Widget")
	widget.SetNamespace(ns)
	widget.SetName(wl.Name)
	wantRef := v1alpha1.StampedRef{APIVersion: group + "/v1", Kind: "Widget", Namespace: ns, Name: wl.Name, Resource: "widgets." + group}

	// Skipped: the Secret resource is denied, so the pass is not clean.
	setChainResources(t, chain, "config", "secret")
	eventually(t, 2*time.Minute, func() (bool, string) {
		got := workload(t, ns, wl.Name)
		if c := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionResourcesSubmitted); c == nil || c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, "forbidden") {
			return false, "ResourcesSubmitted " + condString(c) + ", want False naming the denial of the Secret"
		}
		return pendingIs(got, wantRef, "waiting for every resource to be submitted")
	})
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(widget), widget.DeepCopy()); err != nil {
		t.Fatalf("the Widget of the removed resource is gone after a pass that was not clean: %v", err)
	}

	// Denied: the pass is clean now, and the Widget's delete is refused.
	grant(t, ns, "secrets", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"*"}})
	eventually(t, 3*time.Minute, func() (bool, string) {
		got := workload(t, ns, wl.Name)
		if why := readyExactly(got); why != "" {
			return false, why
		}
		return pendingIs(got, wantRef, fmt.Sprintf(`unable to delete Widget/%s: widgets.%s "%s" is forbidden`, wl.Name, group, wl.Name))
	})
	eventually(t, time.Minute, func() (bool, string) {
		var events corev1.EventList
		if err := k8s.List(ctx, &events, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		for _, e := range events.Items {
			if e.Type == corev1.EventTypeWarning && e.Reason == v1alpha1.EventStampedObjectRemovalFailed && e.InvolvedObject.Name == wl.Name &&
				strings.Contains(e.Message, "Widget/"+wl.Name) && strings.Contains(e.Message, "forbidden") {
				return true, ""
			}
		}
		return false, fmt.Sprintf("no Warning %s about Widget/%s in %d events", v1alpha1.EventStampedObjectRemovalFailed, wl.Name, len(events.Items))
	})
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(widget), widget.DeepCopy()); err != nil {
		t.Fatalf("the Widget whose delete is denied: %v", err)
	}

	// Allowed: deleted on a retry, and no longer listed.
	grant(t, ns, "widgets-delete", rbacv1.PolicyRule{APIGroups: []string{group}, Resources: []string{"widgets"}, Verbs: []string{"delete"}})
	eventually(t, 3*time.Minute, func() (bool, string) {
		got := workload(t, ns, wl.Name)
		if why := readyExactly(got); why != "" {
			return false, why
		}
		if len(got.Status.PendingDeletions) != 0 {
			return false, fmt.Sprintf("pendingDeletions %+v, want none", got.Status.PendingDeletions)
		}
		err := k8s.Get(ctx, client.ObjectKeyFromObject(widget), widget.DeepCopy())
		return apierrors.IsNotFound(err), fmt.Sprintf("the Widget is still there (err %v)", err)
	})
}

// A delete webhook that never answers holds no worker (DESIGN §12, "Kinds"): the
// Workload whose Gizmo is pruned lists it in status.pendingDeletions, saying the write
// timed out, and the controller tries the delete again (the webhook sees it twice), while
// 50 Workloads of another kind, created after the hang began, converge. Once the webhook is
// gone, the Gizmo is deleted and the list is empty.
func TestPruneHangingDeleteWebhookHoldsNoWorker(t *testing.T) {
	const group = "hangdelete.faults.example.com"
	const chain = "faults-hangdelete"
	ns := newNamespace(t, chain)
	installCRD(t, group, "Gizmo")
	allowStamping(t, ns, group)
	env.CreateAll(ctx, t,
		chainTemplate(t, chain+"-gizmo", `{"apiVersion": "`+group+`/v1", "kind": "Gizmo",
			"metadata": {"name": "$(workload.metadata.name)$"}, "spec": {"source": "$(workload.spec.source.git.url)$"}}`),
		chainTemplate(t, chain+"-config", `{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": {"name": "$(workload.metadata.name)$-config"}, "data": {"source": "$(workload.spec.source.git.url)$"}}`),
		templatesChain(chain, "gizmo"),
	)
	c := launchController(t, "surveyor-hangdelete")
	c.waitLeader(t, 2*time.Minute)
	wl := newWorkload(ns, chain, 0)
	env.CreateAll(ctx, t, wl)
	waitAllReady(t, ns, 1, 2*time.Minute)
	gizmo := &unstructured.Unstructured{}
	gizmo.SetAPIVersion(group + "/v1")
	gizmo.SetKind("Gizmo")
	gizmo.SetNamespace(ns)
	gizmo.SetName(wl.Name)

	hook, deletes := hangingDeleteWebhook(t, chain, group, "gizmos")
	// The API server calls the webhook once it has loaded its configuration: a dry-run
	// delete (which goes through admission, and deletes nothing) shows when.
	eventually(t, time.Minute, func() (bool, string) {
		probe, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		_ = k8s.Delete(probe, gizmo.DeepCopy(), client.DryRunAll)
		return hook.Load() > 0, "the delete webhook has not been called yet"
	})

	setChainResources(t, chain, "config")
	healthyNS := newNamespace(t, "faults-hangdelete-healthy")
	configMapChain(t, "faults-hangdelete-healthy")
	createWorkloads(t, healthyNS, "faults-hangdelete-healthy", 0, stallWorkloads)
	eventually(t, 3*time.Minute, func() (bool, string) {
		var list v1alpha1.WorkloadList
		if err := k8s.List(ctx, &list, client.InNamespace(healthyNS)); err != nil {
			return false, err.Error()
		}
		ready := 0
		var last string
		for i := range list.Items {
			if why := readyExactly(&list.Items[i]); why != "" {
				last = why
				continue
			}
			ready++
		}
		return ready == stallWorkloads, fmt.Sprintf("%d of %d workloads of another kind ready; %s", ready, stallWorkloads, last)
	})

	ref := v1alpha1.StampedRef{APIVersion: group + "/v1", Kind: "Gizmo", Namespace: ns, Name: wl.Name, Resource: "gizmos." + group}
	eventually(t, 3*time.Minute, func() (bool, string) {
		got := workload(t, ns, wl.Name)
		if why := readyExactly(got); why != "" {
			return false, why
		}
		if ok, why := pendingIs(got, ref, "a write timed out"); !ok {
			return false, why
		}
		return deletes.Load() >= 2, fmt.Sprintf("the controller tried the delete %d times, want it tried again", deletes.Load())
	})
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(gizmo), gizmo.DeepCopy()); err != nil {
		t.Fatalf("the Gizmo whose delete hangs: %v", err)
	}

	if err := k8s.Delete(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: chain}}); err != nil {
		t.Fatal(err)
	}
	// The kind's writes back off to at most maxStallBackoff (5 minutes) while they time out.
	eventually(t, 7*time.Minute, func() (bool, string) {
		got := workload(t, ns, wl.Name)
		if len(got.Status.PendingDeletions) != 0 {
			return false, fmt.Sprintf("pendingDeletions %+v, want none", got.Status.PendingDeletions)
		}
		err := k8s.Get(ctx, client.ObjectKeyFromObject(gizmo), gizmo.DeepCopy())
		return apierrors.IsNotFound(err), fmt.Sprintf("the Gizmo is still there (err %v)", err)
	})
}

// hangingDeleteWebhook registers a validating webhook configuration named name on
// the deletes of group's resource that never answers (failurePolicy Fail, the longest
// timeout), and returns how many requests it got in all, and how many of them were not dry
// runs (the controller's).
func hangingDeleteWebhook(t *testing.T, name, group, resource string) (all, deletes *atomic.Int32) {
	t.Helper()
	all, deletes = &atomic.Int32{}, &atomic.Int32{}
	srv := hangingServer(t, func(r *http.Request) {
		var review struct {
			Request struct {
				DryRun *bool `json:"dryRun"`
			} `json:"request"`
		}
		if json.NewDecoder(r.Body).Decode(&review) == nil && (review.Request.DryRun == nil || !*review.Request.DryRun) {
			deletes.Add(1)
		}
		all.Add(1)
	})
	caBundle := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	url := srv.URL + "/validate"
	fail := admissionregistrationv1.Fail
	none := admissionregistrationv1.SideEffectClassNone
	scope := admissionregistrationv1.NamespacedScope
	timeout := int32(30)
	env.CreateAll(ctx, t, &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:                    "delete." + group,
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: caBundle},
			Rules:                   []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Delete}, Rule: admissionregistrationv1.Rule{APIGroups: []string{group}, APIVersions: []string{"*"}, Resources: []string{resource}, Scope: &scope}}},
			FailurePolicy:           &fail,
			SideEffects:             &none,
			AdmissionReviewVersions: []string{"v1"},
			TimeoutSeconds:          &timeout,
		}},
	})
	return all, deletes
}

// grant lets the stamper ServiceAccount of ns do what rule allows, through a Role and
// RoleBinding named name.
func grant(t *testing.T, ns, name string, rule rbacv1.PolicyRule) {
	t.Helper()
	env.CreateAll(ctx, t,
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Rules: []rbacv1.PolicyRule{rule}},
		&rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: stamper, Namespace: ns}},
		},
	)
}

// chainTemplate is a ClusterTemplate named name stamping the JSON object.
func chainTemplate(t *testing.T, name, object string) *v1alpha1.ClusterTemplate {
	t.Helper()
	return &v1alpha1.ClusterTemplate{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.TemplateSpec{Template: harness.RawTemplate(t, object)}}
}

// templatesChain is a supply chain named chain of the resources named, each stamped by the
// ClusterTemplate chain-resource, selecting Workloads labelled caseLabel=chain.
func templatesChain(chain string, resources ...string) *v1alpha1.ClusterSupplyChain {
	sc := &v1alpha1.ClusterSupplyChain{
		ObjectMeta: metav1.ObjectMeta{Name: chain},
		Spec:       v1alpha1.ClusterSupplyChainSpec{OwnerSelector: v1alpha1.OwnerSelector{Selector: map[string]string{caseLabel: chain}}},
	}
	sc.Spec.Resources = chainResources(chain, resources...)
	return sc
}

func chainResources(chain string, names ...string) []v1alpha1.SupplyChainResource {
	var out []v1alpha1.SupplyChainResource
	for _, name := range names {
		out = append(out, v1alpha1.SupplyChainResource{Name: name, TemplateRef: v1alpha1.SupplyChainTemplateReference{Kind: v1alpha1.KindClusterTemplate, Name: chain + "-" + name}})
	}
	return out
}

// setChainResources makes the supply chain chain's resources the ones named.
func setChainResources(t *testing.T, chain string, names ...string) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var sc v1alpha1.ClusterSupplyChain
		if err := k8s.Get(ctx, client.ObjectKey{Name: chain}, &sc); err != nil {
			return err
		}
		sc.Spec.Resources = chainResources(chain, names...)
		return k8s.Update(ctx, &sc)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// workload reads the Workload ns/name.
func workload(t *testing.T, ns, name string) *v1alpha1.Workload {
	t.Helper()
	var wl v1alpha1.Workload
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &wl); err != nil {
		t.Fatal(err)
	}
	return &wl
}

// readyExactly says why the Workload is not Ready=True Ready with ResourcesSubmitted=True
// ResourceSubmissionComplete at its generation, or "" when it is.
func readyExactly(wl *v1alpha1.Workload) string {
	for _, want := range []metav1.Condition{
		{Type: v1alpha1.ConditionResourcesSubmitted, Reason: v1alpha1.ReasonResourceSubmissionComplete},
		{Type: v1alpha1.ConditionReady, Reason: v1alpha1.ReasonReady},
	} {
		c := meta.FindStatusCondition(wl.Status.Conditions, want.Type)
		if c == nil || c.Status != metav1.ConditionTrue || c.Reason != want.Reason || c.ObservedGeneration != wl.Generation {
			return fmt.Sprintf("workload %s: %s %s, want True %s", wl.Name, want.Type, condString(c), want.Reason)
		}
	}
	return ""
}

// pendingIs says whether the Workload's only pending deletion is ref, for its resource
// named after its kind, with a message containing msg.
func pendingIs(wl *v1alpha1.Workload, ref v1alpha1.StampedRef, msg string) (bool, string) {
	p := wl.Status.PendingDeletions
	if len(p) != 1 || p[0].StampedRef != ref || p[0].Resource != strings.ToLower(ref.Kind) || !strings.Contains(p[0].Message, msg) || p[0].Since.IsZero() {
		return false, fmt.Sprintf("pendingDeletions %+v, want only %+v for resource %s with a message containing %q", p, ref, strings.ToLower(ref.Kind), msg)
	}
	return true, ""
}
