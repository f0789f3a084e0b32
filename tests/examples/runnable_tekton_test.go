package examples

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/hack/tools"
	cartov1alpha1 "github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

const tektonV1beta1 = "tekton.dev/v1beta1"

// newTaskRun waits until the Runnable has stamped exactly one TaskRun not in seen, adds it
// to seen and returns it. Names come from generateName, so what is new tells the runs apart.
func newTaskRun(t *testing.T, ns, runnable string, seen map[string]bool) *unstructured.Unstructured {
	t.Helper()
	var fresh []unstructured.Unstructured
	eventually(t, time.Minute, func() (bool, string) {
		var l unstructured.UnstructuredList
		l.SetAPIVersion(tektonV1beta1)
		l.SetKind("TaskRunList")
		if err := k8s.List(ctx, &l, client.InNamespace(ns), client.MatchingLabels{cartov1alpha1.LabelRunnableName: runnable}); err != nil {
			return false, err.Error()
		}
		fresh = fresh[:0]
		for _, r := range l.Items {
			if !seen[r.GetName()] {
				fresh = append(fresh, r)
			}
		}
		return len(fresh) == 1, fmt.Sprintf("%d TaskRuns of Runnable %s, %d of them new, want 1 new", len(l.Items), runnable, len(fresh))
	})
	seen[fresh[0].GetName()] = true
	return &fresh[0]
}

// playTaskRun writes what Tekton's TaskRun reconciler writes when the run ends: the
// Succeeded condition, start and completion times. A failed run's step is step-test.
func playTaskRun(t *testing.T, ns, name string, succeeded bool) {
	t.Helper()
	playTaskRunStep(t, ns, name, "test", succeeded)
}

// playTaskRunStep is playTaskRun for a Task whose failing step is named step.
func playTaskRunStep(t *testing.T, ns, name, step string, succeeded bool) {
	t.Helper()
	now := time.Now().UTC().Format(time.RFC3339)
	c := map[string]any{"type": "Succeeded", "status": "True", "reason": "Succeeded",
		"message": "All Steps have completed executing", "lastTransitionTime": now}
	if !succeeded {
		c = map[string]any{"type": "Succeeded", "status": "False", "reason": "Failed",
			"message": fmt.Sprintf("%q exited with code 1", "step-"+step), "lastTransitionTime": now}
	}
	writeStatus(t, tektonV1beta1, "TaskRun", ns, name, map[string]any{
		"conditions":     []any{c},
		"startTime":      now,
		"completionTime": now,
		"podName":        name + "-pod",
	})
}

// runnableConds waits until the Runnable's conditions are want.
func runnableConds(t *testing.T, ns, name string, want []cond) *cartov1alpha1.Runnable {
	t.Helper()
	var r cartov1alpha1.Runnable
	eventually(t, time.Minute, func() (bool, string) {
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &r); err != nil {
			return false, err.Error()
		}
		return sameConds(r.Status.Conditions, want)
	})
	return &r
}

// patchFile merge-patches obj with a file of the example, as kubectl patch --type merge
// --patch-file does in the README.
func patchFile(t *testing.T, obj client.Object, example, file string) {
	t.Helper()
	dir, err := tools.SourceDir("cartographer")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "examples", example, file))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := decode(data)
	if err != nil || len(objs) != 1 {
		t.Fatalf("%s: %v objects, %v", file, len(objs), err)
	}
	patch, err := objs[0].MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if err := k8s.Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatalf("patching %s with %s: %v", obj.GetName(), file, err)
	}
}

// TestRunnableTekton runs examples/runnable-tekton: a Runnable whose TaskRun passes,
// then a revision whose TaskRun fails, then one that passes again.
func TestRunnableTekton(t *testing.T) {
	ns := newNamespace(t, "runnable-tekton")
	ready := []cond{{"RunTemplateReady", "True", "Ready", ""}, {"StampedObjectCondition", "True", "SucceededCondition", "All Steps have completed executing"}, {"Ready", "True", "Ready", ""}}
	start := time.Now()
	for _, f := range []string{"00-setup/cluster-run-template.yml", "00-setup/service-account.yml", "00-setup/tekton-task.yml", "01-tests-pass/runnable.yml"} {
		applyAll(t, ns, render(t, "runnable-tekton", "-f", f))
	}
	seen := map[string]bool{}
	run := newTaskRun(t, ns, "test", seen)
	if url, _, _ := unstructured.NestedSlice(run.Object, "spec", "params"); fmt.Sprint(url) != "[map[name:blob-url value:https://github.com/carto-run/hello-world] map[name:blob-revision value:19769456b6b229b3e78f2b90eced15a353eb4e7c]]" {
		t.Errorf("TaskRun spec.params %v", url)
	}
	playTaskRun(t, ns, run.GetName(), true)
	r := runnableConds(t, ns, "test", ready)
	t.Logf("runnable-tekton: applied to Ready in %s", time.Since(start).Round(time.Millisecond))
	if got := string(r.Status.Outputs["revision"].Raw); got != `"19769456b6b229b3e78f2b90eced15a353eb4e7c"` {
		t.Errorf("Runnable output revision %s", got)
	}
	stampedLabels(t, run, map[string]string{cartov1alpha1.LabelRunnableName: "test", cartov1alpha1.LabelRunTemplateName: "tekton-taskrun"})

	// Failure: the next revision's tests fail.
	patchFile(t, r, "runnable-tekton", "02-tests-fail/runnable-patch.yml")
	run = newTaskRun(t, ns, "test", seen)
	playTaskRun(t, ns, run.GetName(), false)
	r = runnableConds(t, ns, "test", []cond{
		{"RunTemplateReady", "True", "Ready", ""},
		{"StampedObjectCondition", "False", "SucceededCondition", `"step-test" exited with code 1`},
		{"Ready", "False", "SucceededCondition", `"step-test" exited with code 1`},
	})
	// The outputs are the last succeeded run's until a new one succeeds.
	if got := string(r.Status.Outputs["revision"].Raw); got != `"19769456b6b229b3e78f2b90eced15a353eb4e7c"` {
		t.Errorf("Runnable output revision after a failed run %s", got)
	}

	// Recovery: a revision whose tests pass.
	patchFile(t, r, "runnable-tekton", "03-tests-pass/runnable-patch.yml")
	run = newTaskRun(t, ns, "test", seen)
	playTaskRun(t, ns, run.GetName(), true)
	r = runnableConds(t, ns, "test", ready)
	if got := string(r.Status.Outputs["revision"].Raw); got != `"3d42c19a618bb8fc13f72178b8b5e214a2f989c4"` {
		t.Errorf("Runnable output revision after recovery %s", got)
	}
}
