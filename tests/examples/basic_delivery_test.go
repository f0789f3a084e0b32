package examples

import (
	"fmt"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cartov1alpha1 "github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// playApp writes what kapp-controller writes at the end of a reconcile of an App: one
// condition, ReconcileSucceeded or ReconcileFailed, and the friendly description.
func playApp(t *testing.T, ns, name string, succeeded bool) {
	t.Helper()
	c := map[string]any{"type": "ReconcileSucceeded", "status": "True"}
	desc := "Reconcile succeeded"
	status := map[string]any{}
	if !succeeded {
		c = map[string]any{"type": "ReconcileFailed", "status": "True", "message": "Deploying: Error (see .status.usefulErrorMessage for details)"}
		desc = "Reconcile failed: Deploying: Error (see .status.usefulErrorMessage for details)"
		status["usefulErrorMessage"] = "kapp: Error: Applying create service/gitops (serving.knative.dev/v1): the server could not find the requested resource"
	}
	status["conditions"] = []any{c}
	status["friendlyDescription"] = desc
	writeStatus(t, kappV1alpha1, "App", ns, name, status)
}

// waitDeliverable waits until the Deliverable's conditions are want, at its generation,
// and returns it.
func waitDeliverable(t *testing.T, ns, name string, want []cond) *cartov1alpha1.Deliverable {
	t.Helper()
	var d cartov1alpha1.Deliverable
	eventually(t, 2*time.Minute, func() (bool, string) {
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &d); err != nil {
			return false, err.Error()
		}
		if d.Status.ObservedGeneration != d.Generation {
			return false, fmt.Sprintf("observedGeneration %d of %d", d.Status.ObservedGeneration, d.Generation)
		}
		return sameConds(d.Status.Conditions, want)
	})
	return &d
}

// TestBasicDelivery runs examples/basic-delivery: a GitRepository holding configuration
// and a kapp App deploying it. Its own RBAC lets the Deliverable's ServiceAccount create
// no kapp Apps, so, as under Cartographer, it is not Ready as shipped; the test then grants
// what is missing.
func TestBasicDelivery(t *testing.T) {
	ns := newNamespace(t, "basic-delivery")
	start := time.Now()
	applyAll(t, ns, render(t, "basic-delivery", "-f", "."))
	// The README renders ../shared/cluster/secret.yaml and serviceaccount.yaml too, but with
	// this example's values.yaml ytt fails on them ("struct has no .registry field or
	// method"), and the Deliverable uses neither: its ServiceAccount is default.
	applyAll(t, ns, render(t, "basic-delivery", "-f", "../shared/cluster/rbac.yaml", "-f", "./values.yaml"))
	// As shipped, the Deliverable's url has no scheme, which the real GitRepository CRD
	// refuses (Cartographer's own tests stamp it on no such schema).
	rejected := `unable to apply object [GitRepository/gitops] for resource [source-provider]: GitRepository.source.toolkit.fluxcd.io "gitops" is invalid: spec.url: Invalid value: "github.com/example/example.git": spec.url in body should match '^(http|https|ssh)://.*$'`
	waitDeliverable(t, ns, "gitops", []cond{
		{"DeliveryReady", "True", "Ready", ""},
		{"ResourcesSubmitted", "False", "TemplateRejectedByAPIServer", rejected},
		{"ResourcesHealthy", "Unknown", "HealthyConditionRule", ""},
		{"Ready", "False", "TemplateRejectedByAPIServer", rejected},
		{"Available", "False", "NotYetAvailable", "no generation has been healthy yet"},
	})
	// The test's change, not the example's: a url with its scheme.
	var deliverable cartov1alpha1.Deliverable
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "gitops"}, &deliverable); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(deliverable.DeepCopy())
	deliverable.Spec.Source.Git.URL = "https://github.com/example/example.git"
	if err := k8s.Patch(ctx, &deliverable, patch); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, func() (bool, string) {
		_, err := tryGet(gitRepositoryV1, "GitRepository", ns, "gitops")
		return err == nil, fmt.Sprint(err)
	})
	playGitRepository(t, ns, "gitops", revision)

	// As shipped: the App cannot be created.
	d := waitDeliverable(t, ns, "gitops", []cond{
		{"DeliveryReady", "True", "Ready", ""},
		{"ResourcesSubmitted", "False", "TemplateRejectedByAPIServer", ""},
		{"ResourcesHealthy", "Unknown", "HealthyConditionRule", ""},
		{"Ready", "False", "TemplateRejectedByAPIServer", ""},
		{"Available", "False", "NotYetAvailable", ""},
	})
	t.Logf("basic-delivery as shipped: %v", conds(d.Status.Conditions, nil))
	deployer := resource(d.Status.Resources, "deployer")
	if deployer == nil {
		t.Fatalf("no deployer in %+v", d.Status.Resources)
	}
	t.Logf("deployer: %v", conds(deployer.Conditions, nil))
	if ok, msg := sameConds(deployer.Conditions, []cond{
		{"ResourceSubmitted", "False", "TemplateRejectedByAPIServer", ""},
		// Cartographer's reason for a deployment with nothing stamped (DESIGN §8).
		{"Healthy", "Unknown", "OutputNotAvailable", ""},
		{"Ready", "False", "TemplateRejectedByAPIServer", ""},
	}); !ok {
		t.Errorf("deployer: %s", msg)
	}

	// The test's addition, not the example's: the rights on kapp Apps its RBAC lacks.
	grant := []client.Object{
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "test-addition-kapp-apps"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{"kappctrl.k14s.io"}, Resources: []string{"apps"},
				Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}}}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "test-addition-kapp-apps"},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "test-addition-kapp-apps"},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "default", Namespace: ns}}},
	}
	env.CreateAll(ctx, t, grant...)
	granted := time.Now()
	var app *unstructured.Unstructured
	eventually(t, time.Minute, func() (bool, string) {
		u, err := tryGet(kappV1alpha1, "App", ns, "gitops")
		app = u
		return err == nil, fmt.Sprint(err)
	})
	fetch, _, _ := unstructured.NestedSlice(app.Object, "spec", "fetch")
	if got := fmt.Sprint(fetch); got != fmt.Sprintf("[map[http:map[url:%s]]]", artifactURL(ns, "gitops")) {
		t.Errorf("App spec.fetch %s, want the GitRepository's artifact", got)
	}
	readyDeliverable := []cond{
		{"DeliveryReady", "True", "Ready", ""},
		{"ResourcesSubmitted", "True", "ResourceSubmissionComplete", ""},
		{"ResourcesHealthy", "True", "HealthyConditionRule", ""},
		{"Ready", "True", "Ready", ""},
		{"Available", "True", "HealthyAtGeneration", "all resources were healthy at generation 2"},
	}
	playApp(t, ns, "gitops", true)
	d = waitDeliverable(t, ns, "gitops", readyDeliverable)
	t.Logf("basic-delivery: Ready %s after the test granted the rights (%s after applying)",
		time.Since(granted).Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	if got := outputs(resource(d.Status.Resources, "deployer")); got["url"] != artifactURL(ns, "gitops")+"\n" || got["revision"] != revision+"\n" {
		t.Errorf("deployer outputs %v, want the deployment input passed through", got)
	}

	// Failure: kapp fails to deploy.
	playApp(t, ns, "gitops", false)
	failed := `resource [deployer] failed condition met: deployment failure condition [.status.conditions[?(@.type=="ReconcileFailed")].status] was: True`
	waitDeliverable(t, ns, "gitops", []cond{
		{"DeliveryReady", "True", "Ready", ""},
		{"ResourcesSubmitted", "False", "FailedConditionMet", failed},
		{"ResourcesHealthy", "Unknown", "HealthyConditionRule", ""},
		{"Ready", "False", "FailedConditionMet", failed},
		{"Available", "True", "HealthyAtGeneration", ""},
	})

	// Recovery: the next reconcile succeeds.
	playApp(t, ns, "gitops", true)
	waitDeliverable(t, ns, "gitops", readyDeliverable)
	if g := get(t, gitRepositoryV1, "GitRepository", ns, "gitops").GetGeneration(); g != 1 {
		t.Errorf("GitRepository generation %d, want 1: Surveyor rewrote it", g)
	}
}
