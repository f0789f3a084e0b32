package integration

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// testRunGVK is a kind standing in for a Tekton TaskRun: the test sets its Succeeded
// condition.
var testRunGVK = schema.GroupVersionKind{Group: "test.surveyor.dev", Version: "v1", Kind: "RunnableRun"}

// installRunKind installs the test run kind (once: the CRD is the suite's).
func installRunKind(t *testing.T) {
	t.Helper()
	crd := decodeOne(t, `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: runnableruns.test.surveyor.dev}
spec:
  group: test.surveyor.dev
  scope: Namespaced
  names: {kind: RunnableRun, listKind: RunnableRunList, plural: runnableruns, singular: runnablerun}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}`)
	if err := k8sClient.Create(ctx, crd); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, func() (bool, string) {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(testRunGVK.GroupVersion().WithKind(testRunGVK.Kind + "List"))
		if err := k8sClient.List(ctx, list); err != nil {
			return false, "the run kind is not served yet: " + err.Error()
		}
		return true, ""
	})
}

// runnerNamespace is a fresh namespace whose ServiceAccount runner may write the test
// runs and ConfigMaps, and nothing else.
func runnerNamespace(t *testing.T, prefix string) string {
	t.Helper()
	ns := env.StamperNamespace(ctx, t, k8sClient, prefix, "runner")
	env.CreateAll(ctx, t,
		&rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Name: "runner-runs", Namespace: ns},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{testRunGVK.Group}, Resources: []string{"runnableruns"},
				Verbs: []string{"get", "list", "watch", "create", "delete"}}},
		},
		&rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "runner-runs", Namespace: ns},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "runner-runs"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "runner", Namespace: ns}},
		},
	)
	return ns
}

// runTemplate creates a ClusterRunTemplate of a test run carrying the Runnable's revision
// input and the selected ConfigMap's data, whose output revision is read from the run's
// status.
func runTemplate(t *testing.T) string {
	t.Helper()
	name := uniqueName(t)
	tpl := &v1alpha1.ClusterRunTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.RunTemplateSpec{
			Template: v1alpha1.RunTemplateObject{Raw: []byte(`{"apiVersion":"test.surveyor.dev/v1","kind":"RunnableRun",` +
				`"metadata":{"generateName":"$(runnable.metadata.name)$-"},` +
				`"spec":{"revision":"$(runnable.spec.inputs.revision)$","pipeline":"$(selected.data.pipeline)$"}}`)},
			Outputs: map[string]string{"revision": ".status.revision"},
		},
	}
	createAndCleanUp(t, tpl)
	return name
}

// runsOf lists the runs of Runnable name in ns, oldest first.
func runsOf(t *testing.T, ns, name string) []unstructured.Unstructured {
	t.Helper()
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(testRunGVK.GroupVersion().WithKind(testRunGVK.Kind + "List"))
	if err := k8sClient.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{v1alpha1.LabelRunnableName: name}); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(list.Items, func(a, b unstructured.Unstructured) int {
		return strings.Compare(a.GetAnnotations()["carto.run/stamped-at"], b.GetAnnotations()["carto.run/stamped-at"])
	})
	return list.Items
}

// finish sets a run's Succeeded condition and, when it succeeded, its revision.
func finish(t *testing.T, run unstructured.Unstructured, status metav1.ConditionStatus) {
	t.Helper()
	patch := fmt.Sprintf(`{"status":{"revision":%q,"conditions":[{"type":"Succeeded","status":%q,"reason":"Test","message":"run %s"}]}}`,
		run.Object["spec"].(map[string]any)["revision"], status, status)
	if err := k8sClient.Status().Patch(ctx, &run, client.RawPatch("application/merge-patch+json", []byte(patch))); err != nil {
		t.Fatal(err)
	}
}

// waitRunnable waits until the Runnable's status, at its current generation, satisfies ok.
func waitRunnable(t *testing.T, key client.ObjectKey, what string, ok func(*v1alpha1.Runnable) bool) *v1alpha1.Runnable {
	t.Helper()
	rn := &v1alpha1.Runnable{}
	eventually(t, 30*time.Second, func() (bool, string) {
		if err := k8sClient.Get(ctx, key, rn); err != nil {
			return false, err.Error()
		}
		return rn.Status.ObservedGeneration == rn.Generation && ok(rn), fmt.Sprintf("waiting for %s: status %+v", what, rn.Status)
	})
	return rn
}

func condition(rn *v1alpha1.Runnable, t string) metav1.Condition {
	for _, c := range rn.Status.Conditions {
		if c.Type == t {
			return c
		}
	}
	return metav1.Condition{}
}

// A Runnable creates a run, reads its outputs once it succeeds, creates another run when
// its inputs change and keeps the outputs of the last run that succeeded meanwhile; a change
// of the selected object is realized at once.
func TestRunnableRealizesRuns(t *testing.T) {
	installRunKind(t)
	ns := runnerNamespace(t, "runnable")
	tpl := runTemplate(t)
	selected := &unstructured.Unstructured{}
	selected.SetAPIVersion("v1")
	selected.SetKind("ConfigMap")
	selected.SetNamespace(ns)
	selected.SetName("pipeline")
	selected.SetLabels(map[string]string{"pipeline": "test"})
	selected.Object["data"] = map[string]any{"pipeline": "p1"}
	createAndCleanUp(t, selected)

	rn := &v1alpha1.Runnable{
		ObjectMeta: metav1.ObjectMeta{Name: "tests", Namespace: ns},
		Spec: v1alpha1.RunnableSpec{
			RunTemplateRef:     v1alpha1.RunTemplateReference{Name: tpl},
			ServiceAccountName: "runner",
			Inputs:             map[string]apiextensionsv1.JSON{"revision": {Raw: []byte(`"r1"`)}},
			Selector: &v1alpha1.ResourceSelector{
				Resource:       v1alpha1.ResourceType{APIVersion: "v1", Kind: "ConfigMap"},
				MatchingLabels: map[string]string{"pipeline": "test"},
			},
		},
	}
	createAndCleanUp(t, rn)
	key := client.ObjectKeyFromObject(rn)

	got := waitRunnable(t, key, "a run without a verdict", func(rn *v1alpha1.Runnable) bool {
		return condition(rn, v1alpha1.ConditionReady).Reason == v1alpha1.ReasonUnknown && len(rn.Status.Runs) == 1
	})
	for _, c := range got.Status.Conditions {
		if c.ObservedGeneration != got.Generation {
			t.Errorf("%s: observedGeneration %d, want %d", c.Type, c.ObservedGeneration, got.Generation)
		}
	}
	runs := runsOf(t, ns, "tests")
	if len(runs) != 1 || runs[0].Object["spec"].(map[string]any)["pipeline"] != "p1" {
		t.Fatalf("runs %v, want one of pipeline p1", runs)
	}
	finish(t, runs[0], metav1.ConditionTrue)
	waitRunnable(t, key, "the run's outputs", func(rn *v1alpha1.Runnable) bool {
		return condition(rn, v1alpha1.ConditionReady).Status == metav1.ConditionTrue && string(rn.Status.Outputs["revision"].Raw) == `"r1"`
	})

	// The selected object changes: a new run at once, from its new data.
	selected.Object["data"] = map[string]any{"pipeline": "p2"}
	if err := k8sClient.Update(ctx, selected); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, func() (bool, string) {
		runs = runsOf(t, ns, "tests")
		return len(runs) == 2, fmt.Sprintf("%d runs, want 2", len(runs))
	})
	if p := runs[1].Object["spec"].(map[string]any)["pipeline"]; p != "p2" {
		t.Errorf("the new run's pipeline is %v, want p2", p)
	}
	// While it runs, the outputs are the last successful run's.
	got = waitRunnable(t, key, "the second run", func(rn *v1alpha1.Runnable) bool {
		return len(rn.Status.Runs) == 2 && condition(rn, v1alpha1.ConditionReady).Status == metav1.ConditionUnknown
	})
	if string(got.Status.Outputs["revision"].Raw) != `"r1"` || got.Status.Runs[0].Name != runs[1].GetName() {
		t.Errorf("outputs %v, runs %+v: want r1's outputs kept and the new run first", got.Status.Outputs, got.Status.Runs)
	}
	finish(t, runs[1], metav1.ConditionFalse)
	waitRunnable(t, key, "the failed run", func(rn *v1alpha1.Runnable) bool {
		c := condition(rn, v1alpha1.ConditionReady)
		return c.Status == metav1.ConditionFalse && c.Reason == v1alpha1.ReasonSucceededCondition && c.Message == "run False"
	})
}
