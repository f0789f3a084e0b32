package integration

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"

	"github.com/surveyor-dev/surveyor/internal/harness"
)

// One owner reconciler serves Workloads and Deliverables: the same templates, chained
// the same way by a supply chain and by a delivery, give the two owners the same status
// field by field, owner-specific names aside. Then a change to a shared template reaches
// both the same way.
func TestOwnerParityWorkloadAndDeliverable(t *testing.T) {
	const name = "owner-parity"
	wlNS, dlvNS := newNamespace(t), newNamespace(t)
	grantStamping(t, wlNS, "stamper", "configmaps")
	grantStamping(t, dlvNS, "stamper", "configmaps")
	param := func(n, v string) []v1alpha1.BlueprintParam {
		return []v1alpha1.BlueprintParam{{Name: n, Default: &apiextensionsv1.JSON{Raw: []byte(v)}}}
	}
	env.CreateAll(ctx, t,
		&v1alpha1.ClusterSourceTemplate{
			ObjectMeta: metav1.ObjectMeta{Name: name + "-source"},
			Spec: v1alpha1.ClusterSourceTemplateSpec{
				URLPath: ".data.url", RevisionPath: ".data.revision",
				TemplateSpec: v1alpha1.TemplateSpec{
					HealthyConditionRule: &v1alpha1.HealthRule{AlwaysHealthy: &v1alpha1.AlwaysHealthyRule{}},
					Template: harness.RawTemplate(t, `{
					"apiVersion": "v1", "kind": "ConfigMap",
					"metadata": {"name": "$(workload.metadata.name)$-source"},
					"data": {"url": "$(workload.spec.source.git.url)$", "revision": "$(workload.spec.source.git.ref.branch)$"}}`)},
			},
		},
		&v1alpha1.ClusterConfigTemplate{
			ObjectMeta: metav1.ObjectMeta{Name: name + "-config"},
			Spec: v1alpha1.ClusterConfigTemplateSpec{
				ConfigPath: ".data",
				TemplateSpec: v1alpha1.TemplateSpec{Template: harness.RawTemplate(t, `{
					"apiVersion": "v1", "kind": "ConfigMap",
					"metadata": {"name": "$(workload.metadata.name)$-config"},
					"data": {"source": "$(source.url)$@$(source.revision)$", "greeting": "$(params.greeting)$"}}`)},
			},
		},
		&v1alpha1.ClusterTemplate{
			ObjectMeta: metav1.ObjectMeta{Name: name + "-app"},
			Spec: v1alpha1.TemplateSpec{
				HealthyConditionRule: &v1alpha1.HealthRule{MultiMatch: &v1alpha1.MultiMatchRule{
					Healthy:   v1alpha1.MatchRule{MatchFields: []v1alpha1.HealthMatchFieldSelectorRequirement{{FieldSelectorRequirement: v1alpha1.FieldSelectorRequirement{Key: "data.state", Operator: v1alpha1.FieldSelectorOpIn, Values: []string{"up"}}}}},
					Unhealthy: v1alpha1.MatchRule{MatchFields: []v1alpha1.HealthMatchFieldSelectorRequirement{{FieldSelectorRequirement: v1alpha1.FieldSelectorRequirement{Key: "data.state", Operator: v1alpha1.FieldSelectorOpIn, Values: []string{"down"}}}}},
				}},
				Template: harness.RawTemplate(t, `{
					"apiVersion": "v1", "kind": "ConfigMap",
					"metadata": {"name": "$(workload.metadata.name)$-app"},
					"data": {"config": "config=$(config)$", "state": "up"}}`),
			},
		},
		&v1alpha1.ClusterSupplyChain{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: v1alpha1.ClusterSupplyChainSpec{
				OwnerSelector: v1alpha1.OwnerSelector{Selector: map[string]string{"test.surveyor.dev/case": name}},
				Params:        param("greeting", `"hello"`),
				Resources: []v1alpha1.SupplyChainResource{
					{Name: "source", TemplateRef: v1alpha1.SupplyChainTemplateReference{Kind: v1alpha1.KindClusterSourceTemplate, Name: name + "-source"}},
					{Name: "config", TemplateRef: v1alpha1.SupplyChainTemplateReference{Kind: v1alpha1.KindClusterConfigTemplate, Name: name + "-config"},
						Sources: []v1alpha1.ResourceReference{{Name: "source", Resource: "source"}}},
					{Name: "app", TemplateRef: v1alpha1.SupplyChainTemplateReference{Kind: v1alpha1.KindClusterTemplate, Name: name + "-app"},
						Configs: []v1alpha1.ResourceReference{{Name: "config", Resource: "config"}}},
				},
			},
		},
		&v1alpha1.ClusterDelivery{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: v1alpha1.ClusterDeliverySpec{
				OwnerSelector: v1alpha1.OwnerSelector{Selector: map[string]string{"test.surveyor.dev/case": name}},
				Params:        param("greeting", `"hello"`),
				Resources: []v1alpha1.DeliveryResource{
					{Name: "source", TemplateRef: v1alpha1.DeliveryTemplateReference{Kind: v1alpha1.KindClusterSourceTemplate, Name: name + "-source"}},
					{Name: "config", TemplateRef: v1alpha1.DeliveryTemplateReference{Kind: v1alpha1.KindClusterConfigTemplate, Name: name + "-config"},
						Sources: []v1alpha1.ResourceReference{{Name: "source", Resource: "source"}}},
					{Name: "app", TemplateRef: v1alpha1.DeliveryTemplateReference{Kind: v1alpha1.KindClusterTemplate, Name: name + "-app"},
						Configs: []v1alpha1.ResourceReference{{Name: "config", Resource: "config"}}},
				},
			},
		},
	)
	labels := map[string]string{"test.surveyor.dev/case": name}
	source := &v1alpha1.Source{Git: &v1alpha1.GitSource{URL: "https://example.com/app.git", Ref: &v1alpha1.GitRef{Branch: "main"}}}
	wl := &v1alpha1.Workload{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: wlNS, Labels: labels},
		Spec:       v1alpha1.WorkloadSpec{ServiceAccountName: "stamper", Source: source},
	}
	dlv := &v1alpha1.Deliverable{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: dlvNS, Labels: labels},
		Spec:       v1alpha1.DeliverableSpec{ServiceAccountName: "stamper", Source: source},
	}
	env.CreateAll(ctx, t, wl, dlv)

	// Converged: every condition of both owners and of every resource matches, and the
	// stamped objects hold the same data under the owner kind's labels.
	compareWhenReady(t, wl, dlv, 1)
	for _, suffix := range []string{"-source", "-config", "-app"} {
		var a, b corev1.ConfigMap
		if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: wlNS, Name: "app" + suffix}, &a); err != nil {
			t.Fatal(err)
		}
		if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: dlvNS, Name: "app" + suffix}, &b); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(a.Data, b.Data); diff != "" {
			t.Errorf("app%s data (workload -, deliverable +):\n%s", suffix, diff)
		}
		if b.Labels[v1alpha1.LabelDeliverableName] != "app" || b.Labels[v1alpha1.LabelDeliveryName] != name || b.Labels[v1alpha1.LabelWorkloadName] != "" {
			t.Errorf("app%s labels on the Deliverable's object = %v", suffix, b.Labels)
		}
		if owner := metav1.GetControllerOf(&b); owner == nil || owner.Kind != v1alpha1.KindDeliverable || owner.UID != dlv.UID {
			t.Errorf("app%s controller owner = %+v, want the Deliverable", suffix, owner)
		}
	}

	// A shared template changes so that the app becomes unhealthy: both owners report it
	// the same way.
	var app v1alpha1.ClusterTemplate
	if err := k8sClient.Get(ctx, client.ObjectKey{Name: name + "-app"}, &app); err != nil {
		t.Fatal(err)
	}
	app.Spec.Template = harness.RawTemplate(t, `{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": {"name": "$(workload.metadata.name)$-app"},
		"data": {"config": "config=$(config)$", "state": "down"}}`)
	if err := k8sClient.Update(ctx, &app); err != nil {
		t.Fatal(err)
	}
	compareWhen(t, wl, dlv, func(c *metav1.Condition) bool {
		return c != nil && c.Status == metav1.ConditionFalse && c.Reason == v1alpha1.ReasonHealthyConditionRule
	})
}

// compareWhenReady waits for both owners to be Ready at generation and compares them.
func compareWhenReady(t *testing.T, wl *v1alpha1.Workload, dlv *v1alpha1.Deliverable, generation int64) {
	t.Helper()
	compareWhen(t, wl, dlv, func(ready *metav1.Condition) bool {
		return ready != nil && ready.Status == metav1.ConditionTrue && ready.ObservedGeneration == generation
	})
}

// compareWhen waits until both owners' Ready satisfies done, then compares their
// statuses with the Deliverable's names mapped onto the Workload's.
func compareWhen(t *testing.T, wl *v1alpha1.Workload, dlv *v1alpha1.Deliverable, done func(*metav1.Condition) bool) {
	t.Helper()
	eventually(t, time.Minute, func() (bool, string) {
		if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(wl), wl); err != nil {
			return false, err.Error()
		}
		if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(dlv), dlv); err != nil {
			return false, err.Error()
		}
		a := meta.FindStatusCondition(wl.Status.Conditions, v1alpha1.ConditionReady)
		b := meta.FindStatusCondition(dlv.Status.Conditions, v1alpha1.ConditionReady)
		return done(a) && done(b), fmt.Sprintf("workload Ready %+v, deliverable Ready %+v", a, b)
	})
	if got, want := dlv.Status.DeliveryRef, (&v1alpha1.BlueprintReference{Kind: v1alpha1.KindClusterDelivery, Name: wl.Status.SupplyChainRef.Name}); !cmp.Equal(got, want) {
		t.Errorf("deliveryRef = %+v, want %+v", got, want)
	}
	got := dlv.Status.OwnerStatus.DeepCopy()
	for i, c := range got.Conditions {
		if c.Type == v1alpha1.ConditionDeliveryReady {
			got.Conditions[i].Type = v1alpha1.ConditionSupplyChainReady
		}
	}
	for i := range got.Resources {
		if ref := got.Resources[i].StampedRef; ref != nil {
			ref.Namespace = wl.Namespace
		}
	}
	ignore := []cmp.Option{
		cmpopts.IgnoreFields(metav1.Condition{}, "LastTransitionTime"),
		cmpopts.IgnoreFields(v1alpha1.Output{}, "LastTransitionTime"),
	}
	if len(got.Conditions) != 5 || got.Conditions[0].Type != v1alpha1.ConditionSupplyChainReady {
		t.Errorf("deliverable conditions = %+v, want DeliveryReady first of five", dlv.Status.Conditions)
	}
	if diff := cmp.Diff(&wl.Status.OwnerStatus, got, ignore...); diff != "" {
		t.Errorf("status (workload -, deliverable +):\n%s", diff)
	}
}
