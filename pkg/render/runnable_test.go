package render_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/surveyor-dev/surveyor/internal/fixtures"
	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/render"
	"github.com/surveyor-dev/surveyor/pkg/render/stamp"
)

func runnable() *v1alpha1.Runnable {
	return &v1alpha1.Runnable{
		ObjectMeta: metav1.ObjectMeta{Name: "tests", Namespace: "dev", UID: "uid-1", Generation: 2},
		Spec: v1alpha1.RunnableSpec{
			RunTemplateRef: v1alpha1.RunTemplateReference{Name: "tekton"},
			Inputs:         map[string]apiextensionsv1.JSON{"revision": {Raw: []byte(`"abc"`)}, "count": {Raw: []byte(`3`)}},
		},
	}
}

func runTemplate(t *testing.T, template string) *v1alpha1.ClusterRunTemplate {
	t.Helper()
	tpl := &v1alpha1.ClusterRunTemplate{ObjectMeta: metav1.ObjectMeta{Name: "tekton"}}
	if err := json.Unmarshal([]byte(template), &tpl.Spec.Template); err != nil {
		t.Fatal(err)
	}
	return tpl
}

func TestStampRun(t *testing.T) {
	selected := fixtures.Object(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: pipeline, namespace: dev}\ndata: {a: b}")
	tpl := runTemplate(t, `{"apiVersion":"tekton.dev/v1","kind":"PipelineRun",
		"metadata":{"generateName":"$(runnable.metadata.name)$-","labels":{"carto.run/runnable-name":"mine","team":"a"}},
		"spec":{"revision":"$(runnable.spec.inputs.revision)$","count":"$(runnable.spec.inputs.count)$",
		"ref":"$(runnable.spec.runTemplateRef.kind)$/$(selected.metadata.name)$","data":"$(selected.data)$"}}`)
	obj, err := render.StampRun(runnable(), tpl, selected)
	if err != nil {
		t.Fatal(err)
	}
	want := fixtures.Object(t, `
apiVersion: tekton.dev/v1
kind: PipelineRun
metadata:
  generateName: tests-
  namespace: dev
  labels: {carto.run/runnable-name: tests, carto.run/run-template-name: tekton, team: a}
  ownerReferences:
  - {apiVersion: carto.run/v1alpha1, kind: Runnable, name: tests, uid: uid-1, controller: true, blockOwnerDeletion: true}
spec:
  revision: abc
  count: 3
  ref: ClusterRunTemplate/pipeline
  data: {a: b}
`)
	digest := obj.GetAnnotations()[render.AnnotationStampDigest]
	if digest == "" {
		t.Fatal("no digest annotation")
	}
	obj.SetAnnotations(nil)
	if diff := cmp.Diff(want.Object, obj.Object); diff != "" {
		t.Errorf("stamped run (-want +got):\n%s", diff)
	}

	// The digest is the content's: the same stamp again has it, another input changes it.
	again, err := render.StampRun(runnable(), tpl, selected)
	if err != nil || again.GetAnnotations()[render.AnnotationStampDigest] != digest {
		t.Errorf("restamping: digest %q, %v; want %q", again.GetAnnotations()[render.AnnotationStampDigest], err, digest)
	}
	changed := runnable()
	changed.Spec.Inputs["revision"] = apiextensionsv1.JSON{Raw: []byte(`"def"`)}
	other, err := render.StampRun(changed, tpl, selected)
	if err != nil || other.GetAnnotations()[render.AnnotationStampDigest] == digest {
		t.Errorf("another input: digest %q, %v; want a new one", other.GetAnnotations()[render.AnnotationStampDigest], err)
	}
}

func TestStampRunFailures(t *testing.T) {
	tests := []struct {
		name, template string
		selected       bool
		want           string
	}{
		{"missing input", `{"apiVersion":"v1","kind":"Pod","metadata":{"generateName":"x-"},"spec":{"a":"$(runnable.spec.inputs.nope)$"}}`, false, "runnable.spec.inputs.nope"},
		{"nothing selected", `{"apiVersion":"v1","kind":"Pod","metadata":{"generateName":"x-"},"spec":{"a":"$(selected.metadata.name)$"}}`, false, "selected.metadata.name"},
		{"no name", `{"apiVersion":"v1","kind":"Pod","spec":{}}`, false, "needs apiVersion, kind and metadata.generateName"},
		{"no apiVersion", `{"kind":"Pod","metadata":{"generateName":"x-"},"spec":{}}`, false, "needs apiVersion"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := render.StampRun(runnable(), runTemplate(t, tt.template), nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one naming %q", err, tt.want)
			}
			if strings.HasPrefix(tt.name, "missing") || tt.name == "nothing selected" {
				var se *stamp.Error
				if !errors.As(err, &se) {
					t.Errorf("error %T, want a *stamp.Error", err)
				}
			}
		})
	}
}

func run(t *testing.T, name, succeeded string) *unstructured.Unstructured {
	t.Helper()
	doc := "apiVersion: tekton.dev/v1\nkind: TaskRun\nmetadata: {name: " + name + ", namespace: dev}\nstatus: {revision: r-" + name + ", list: [1, 2]"
	if succeeded != "" {
		doc += ", conditions: [{type: Ready, status: \"False\"}, {type: Succeeded, status: \"" + succeeded + "\", reason: R" + succeeded + ", message: m-" + name + "}]"
	}
	return fixtures.Object(t, doc+"}")
}

func TestVerdictOf(t *testing.T) {
	tests := []struct {
		name string
		run  *unstructured.Unstructured
		want render.Verdict
	}{
		{"succeeded", run(t, "a", "True"), render.Verdict{Status: metav1.ConditionTrue, Reason: "RTrue", Message: "m-a", Found: true}},
		{"failed", run(t, "a", "False"), render.Verdict{Status: metav1.ConditionFalse, Reason: "RFalse", Message: "m-a", Found: true}},
		{"running", run(t, "a", "Unknown"), render.Verdict{Status: metav1.ConditionUnknown, Reason: "RUnknown", Message: "m-a", Found: true}},
		{"odd status", run(t, "a", "Maybe"), render.Verdict{Status: metav1.ConditionUnknown, Reason: "RMaybe", Message: "m-a", Found: true}},
		{"no condition", run(t, "a", ""), render.Verdict{Status: metav1.ConditionUnknown}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := render.VerdictOf(tt.run); got != tt.want {
				t.Errorf("VerdictOf = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestExpired(t *testing.T) {
	const T, F, U = metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionUnknown
	one := v1alpha1.RetentionPolicy{MaxFailedRuns: 1, MaxSuccessfulRuns: 1}
	tests := []struct {
		name     string
		verdicts []metav1.ConditionStatus // oldest first
		policy   v1alpha1.RetentionPolicy
		want     []int // newest first
	}{
		{"none", nil, one, nil},
		{"within the policy", []metav1.ConditionStatus{T, F, U}, one, nil},
		{"older success and failure", []metav1.ConditionStatus{T, F, T, F}, one, []int{1, 0}},
		{"running ones are kept", []metav1.ConditionStatus{U, T, U, T, U}, one, []int{1}},
		{"the newest is never deleted", []metav1.ConditionStatus{T, T}, v1alpha1.RetentionPolicy{MaxFailedRuns: 1, MaxSuccessfulRuns: 1}, []int{0}},
		{"default policy", []metav1.ConditionStatus{T, T, T, T, T, T, T, T, T, T, T, T}, v1alpha1.DefaultRetention, []int{1, 0}},
		{"failures only", []metav1.ConditionStatus{F, F, F}, v1alpha1.RetentionPolicy{MaxFailedRuns: 2, MaxSuccessfulRuns: 1}, []int{0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := render.Expired(tt.verdicts, tt.policy); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Expired = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestRunOutputs(t *testing.T) {
	runs := []*unstructured.Unstructured{run(t, "old", "True"), run(t, "mid", "True"), run(t, "failed", "False"), run(t, "new", "")}
	latest := render.LatestSucceeded(runs)
	if latest == nil || latest.GetName() != "mid" {
		t.Fatalf("LatestSucceeded = %v, want mid", latest)
	}
	if got := render.LatestSucceeded(runs[2:]); got != nil {
		t.Errorf("LatestSucceeded of runs without success = %s, want none", got.GetName())
	}
	tests := []struct {
		name    string
		paths   map[string]string
		want    map[string]string
		wantErr string
	}{
		{"none", nil, map[string]string{}, ""},
		{"values keep their type", map[string]string{"revision": ".status.revision", "list": "status.list", "first": "{.status.list[0]}"},
			map[string]string{"revision": `"r-mid"`, "list": `[1,2]`, "first": `1`}, ""},
		{"missing", map[string]string{"a": ".status.revision", "b": ".status.nope"}, nil, "failed to evaluate path [.status.nope]: "},
		{"several values", map[string]string{"a": ".status.list[*]"}, nil, "failed to evaluate path [.status.list[*]]: too many results for the query: .status.list[*]"},
		{"bad path", map[string]string{"a": ".status[0"}, nil, "failed to evaluate path [.status[0]: invalid jsonpath"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := render.RunOutputs(latest, tt.paths)
			if tt.wantErr != "" {
				var oe *render.OutputsError
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) || !errors.As(err, &oe) || oe.Run != latest {
					t.Fatalf("error %v, want an *OutputsError starting %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			raw := map[string]string{}
			for k, v := range got {
				raw[k] = string(v.Raw)
			}
			if !reflect.DeepEqual(raw, tt.want) {
				t.Errorf("RunOutputs = %v, want %v", raw, tt.want)
			}
		})
	}
}

func TestRunnableConditions(t *testing.T) {
	stampFailure := render.RunTemplateFailure(v1alpha1.ReasonTemplateStampFailure, "unable to stamp object for run template [t]: %s", "boom")
	tests := []struct {
		name string
		res  render.RunnableResult
		want []metav1.Condition // types, statuses, reasons and messages
	}{
		{"ready", render.RunnableResult{Newest: run(t, "a", "True")}, []metav1.Condition{
			{Type: "RunTemplateReady", Status: "True", Reason: "Ready"},
			{Type: "StampedObjectCondition", Status: "True", Reason: "SucceededCondition", Message: "m-a"},
			{Type: "Ready", Status: "True", Reason: "Ready"},
		}},
		{"run without a verdict yet", render.RunnableResult{Newest: run(t, "a", "")}, []metav1.Condition{
			{Type: "RunTemplateReady", Status: "True", Reason: "Ready"},
			{Type: "StampedObjectCondition", Status: "Unknown", Reason: "Unknown"},
			{Type: "Ready", Status: "Unknown", Reason: "Unknown"},
		}},
		{"running", render.RunnableResult{Newest: run(t, "a", "Unknown")}, []metav1.Condition{
			{Type: "RunTemplateReady", Status: "True", Reason: "Ready"},
			{Type: "StampedObjectCondition", Status: "Unknown", Reason: "SucceededCondition", Message: "m-a"},
			{Type: "Ready", Status: "Unknown", Reason: "SucceededCondition", Message: "m-a"},
		}},
		{"failed run", render.RunnableResult{Newest: run(t, "a", "False")}, []metav1.Condition{
			{Type: "RunTemplateReady", Status: "True", Reason: "Ready"},
			{Type: "StampedObjectCondition", Status: "False", Reason: "SucceededCondition", Message: "m-a"},
			{Type: "Ready", Status: "False", Reason: "SucceededCondition", Message: "m-a"},
		}},
		{"the last False wins", render.RunnableResult{Failure: stampFailure, Newest: run(t, "a", "False")}, []metav1.Condition{
			{Type: "RunTemplateReady", Status: "False", Reason: "TemplateStampFailure", Message: "unable to stamp object for run template [t]: boom"},
			{Type: "StampedObjectCondition", Status: "False", Reason: "SucceededCondition", Message: "m-a"},
			{Type: "Ready", Status: "False", Reason: "SucceededCondition", Message: "m-a"},
		}},
		{"a False beats an Unknown", render.RunnableResult{Failure: stampFailure}, []metav1.Condition{
			{Type: "RunTemplateReady", Status: "False", Reason: "TemplateStampFailure", Message: "unable to stamp object for run template [t]: boom"},
			{Type: "StampedObjectCondition", Status: "Unknown", Reason: "Unknown"},
			{Type: "Ready", Status: "False", Reason: "TemplateStampFailure", Message: "unable to stamp object for run template [t]: boom"},
		}},
		{"no runs looked for", render.RunnableResult{Failure: render.RunTemplateFailure(v1alpha1.ReasonServiceAccountError, "sa"), NoRuns: true}, []metav1.Condition{
			{Type: "RunTemplateReady", Status: "False", Reason: "ServiceAccountError", Message: "sa"},
			{Type: "Ready", Status: "False", Reason: "ServiceAccountError", Message: "sa"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := render.RunnableConditions(tt.res, 7)
			for i := range got {
				if got[i].ObservedGeneration != 7 {
					t.Errorf("%s: observedGeneration %d, want 7", got[i].Type, got[i].ObservedGeneration)
				}
				got[i].ObservedGeneration = 0
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRunsOf(t *testing.T) {
	var runs []*unstructured.Unstructured
	for i := 0; i < v1alpha1.MaxReportedRuns+3; i++ {
		runs = append(runs, run(t, strings.Repeat("r", i+1), "True"))
	}
	runs[len(runs)-1] = run(t, "newest", "")
	got := render.RunsOf(runs)
	if len(got) != v1alpha1.MaxReportedRuns {
		t.Fatalf("%d runs, want %d", len(got), v1alpha1.MaxReportedRuns)
	}
	want0 := v1alpha1.RunStatus{APIVersion: "tekton.dev/v1", Kind: "TaskRun", Name: "newest", Succeeded: metav1.ConditionUnknown}
	if got[0] != want0 {
		t.Errorf("newest = %+v, want %+v", got[0], want0)
	}
	if got[1].Name != runs[len(runs)-2].GetName() || got[1].Succeeded != metav1.ConditionTrue || got[1].Message == "" {
		t.Errorf("second = %+v, want the run before the newest, succeeded", got[1])
	}
}

func TestSameRun(t *testing.T) {
	tpl := runTemplate(t, `{"apiVersion":"tekton.dev/v1","kind":"PipelineRun","metadata":{"generateName":"tests-"},"spec":{"revision":"$(runnable.spec.inputs.revision)$"}}`)
	stamped, err := render.StampRun(runnable(), tpl, nil)
	if err != nil {
		t.Fatal(err)
	}
	// A run as the API server holds it: a name, more labels, defaults, a status.
	live := func(edit func(*unstructured.Unstructured)) *unstructured.Unstructured {
		run := stamped.DeepCopy()
		run.SetName("tests-x7k2p")
		run.SetLabels(map[string]string{"carto.run/runnable-name": "tests", "carto.run/run-template-name": "tekton", "tekton.dev/pipeline": "p"})
		run.Object["spec"].(map[string]any)["timeouts"] = map[string]any{"pipeline": "1h0m0s"}
		run.Object["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Succeeded", "status": "True"}}}
		edit(run)
		return run
	}
	withoutDigest := func(run *unstructured.Unstructured) {
		annotations := run.GetAnnotations()
		delete(annotations, render.AnnotationStampDigest)
		run.SetAnnotations(annotations)
	}
	tests := []struct {
		name string
		run  *unstructured.Unstructured
		want bool
	}{
		{"same digest", live(func(*unstructured.Unstructured) {}), true},
		{"same digest, its spec edited since", live(func(r *unstructured.Unstructured) { r.Object["spec"].(map[string]any)["revision"] = "edited" }), true},
		{"another digest", live(func(r *unstructured.Unstructured) {
			r.SetAnnotations(map[string]string{render.AnnotationStampDigest: "other"})
		}), false},
		{"no digest (Cartographer's), holding the stamp", live(withoutDigest), true},
		{"no digest, another revision", live(func(r *unstructured.Unstructured) {
			withoutDigest(r)
			r.Object["spec"].(map[string]any)["revision"] = "other"
		}), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := render.SameRun(tt.run, stamped); got != tt.want {
				t.Errorf("SameRun = %t, want %t", got, tt.want)
			}
		})
	}
}
