package examples

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	cartov1alpha1 "github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// gitWriter is the Runnable examples/gitwriter-sc's git-writer template stamps for the
// Workload dev.
const gitWriter = "dev-git-writer"

// gitWriterService is the knative Service the example's app-config template writes as
// manifest.yaml for the Workload dev and an image.
func gitWriterService(image string) string {
	return `apiVersion: serving.knative.dev/v1
kind: Service
metadata:
  name: dev
  labels:
    app.kubernetes.io/part-of: hello-world
    carto.run/workload-name: dev
    app.kubernetes.io/component: run
spec:
  template:
    metadata:
      annotations:
        autoscaling.knative.dev/minScale: "1"
    spec:
      containers:
        - name: workload
          image: ` + image + `
          securityContext:
            runAsUser: 1000
      imagePullSecrets:
        - name: registry-credentials
`
}

// gitWriterConfig waits until the ConfigMap dev holds the configuration of image, as the
// app-config template writes it (data.manifest: base64 of a JSON map from file name to
// file), and returns data.manifest, the config the supply chain passes on.
func gitWriterConfig(t *testing.T, ns, image string) string {
	t.Helper()
	var want any
	if err := yaml.Unmarshal([]byte(gitWriterService(image)), &want); err != nil {
		t.Fatal(err)
	}
	var config string
	eventually(t, time.Minute, func() (bool, string) {
		cm, err := tryGet("v1", "ConfigMap", ns, "dev")
		if err != nil {
			return false, err.Error()
		}
		config, _, _ = unstructured.NestedString(cm.Object, "data", "manifest")
		js, err := base64.StdEncoding.DecodeString(config)
		if err != nil {
			return false, fmt.Sprintf("data.manifest %q: %v", config, err)
		}
		var files map[string]string
		if err := json.Unmarshal(js, &files); err != nil || len(files) != 1 {
			return false, fmt.Sprintf("data.manifest holds %s, want one file (%v)", js, err)
		}
		var got any
		if err := yaml.Unmarshal([]byte(files["manifest.yaml"]), &got); err != nil {
			return false, fmt.Sprintf("manifest.yaml %q: %v", files["manifest.yaml"], err)
		}
		return reflect.DeepEqual(got, want), fmt.Sprintf("manifest.yaml %q, want the Service of %s", files["manifest.yaml"], image)
	})
	return config
}

// gitWriterRun waits until the Runnable writes config and its TaskRun for it is stamped,
// checks the run against the example's values.yaml and returns it.
func gitWriterRun(t *testing.T, ns, config string, seen map[string]bool) *unstructured.Unstructured {
	t.Helper()
	params := fmt.Sprint([]any{
		map[string]any{"name": "git_repository", "value": "https://github.com/example/example.git"},
		map[string]any{"name": "git_branch", "value": "main"},
		map[string]any{"name": "git_user_name", "value": "example"},
		map[string]any{"name": "git_user_email", "value": "example@example.com"},
		map[string]any{"name": "git_commit_message", "value": "Update app configuration"},
		map[string]any{"name": "git_files", "value": config},
	})
	eventually(t, time.Minute, func() (bool, string) {
		r, err := tryGet("carto.run/v1alpha1", "Runnable", ns, gitWriter)
		if err != nil {
			return false, err.Error()
		}
		got, _, _ := unstructured.NestedSlice(r.Object, "spec", "inputs", "params")
		return fmt.Sprint(got) == params, fmt.Sprintf("Runnable spec.inputs.params %v", got)
	})
	r := get(t, "carto.run/v1alpha1", "Runnable", ns, gitWriter)
	if sa, _, _ := unstructured.NestedString(r.Object, "spec", "serviceAccountName"); sa != "cartographer-example-basic-sc-sa" {
		t.Errorf("Runnable spec.serviceAccountName %q", sa)
	}
	if rt, _, _ := unstructured.NestedString(r.Object, "spec", "runTemplateRef", "name"); rt != "tekton-taskrun" {
		t.Errorf("Runnable spec.runTemplateRef.name %q", rt)
	}
	run := newTaskRun(t, ns, gitWriter, seen)
	if got, _, _ := unstructured.NestedSlice(run.Object, "spec", "params"); fmt.Sprint(got) != params {
		t.Errorf("TaskRun %s spec.params %v, want %s", run.GetName(), got, params)
	}
	if sa, _, _ := unstructured.NestedString(run.Object, "spec", "serviceAccountName"); sa != "cartographer-example-basic-sc-sa" {
		t.Errorf("TaskRun spec.serviceAccountName %q", sa)
	}
	if ref, _, _ := unstructured.NestedMap(run.Object, "spec", "taskRef"); fmt.Sprint(ref) != "map[kind:ClusterTask name:git-writer]" {
		t.Errorf("TaskRun spec.taskRef %v", ref)
	}
	// The run template copies the Runnable's labels, which are the Workload's stamp labels.
	stampedLabels(t, run, map[string]string{
		cartov1alpha1.LabelRunnableName:    gitWriter,
		cartov1alpha1.LabelRunTemplateName: "tekton-taskrun",
		cartov1alpha1.LabelWorkloadName:    "dev",
		cartov1alpha1.LabelResourceName:    "git-writer",
	})
	if o := run.GetOwnerReferences(); len(o) != 1 || o[0].Kind != "Runnable" || o[0].Name != gitWriter {
		t.Errorf("TaskRun owner references %+v", o)
	}
	return run
}

// waitConfig waits until the Workload dev is Ready (readyWorkload) with config as the
// output of its config-provider, so a Ready from before that config does not count.
func waitConfig(t *testing.T, ns, config string) *cartov1alpha1.Workload {
	t.Helper()
	var wl *cartov1alpha1.Workload
	eventually(t, time.Minute, func() (bool, string) {
		wl = workload(t, ns, "dev")
		if got := outputs(resource(wl.Status.Resources, "config-provider"))["config"]; got != config+"\n" {
			return false, fmt.Sprintf("config-provider output config %q, want %q", got, config)
		}
		if wl.Status.ObservedGeneration != wl.Generation {
			return false, fmt.Sprintf("observedGeneration %d of %d", wl.Status.ObservedGeneration, wl.Generation)
		}
		return sameConds(wl.Status.Conditions, readyWorkload(wl.Generation))
	})
	return wl
}

// TestGitWriterSupplyChain runs examples/gitwriter-sc: basic-sc's source and image, then a
// ConfigMap holding the app's configuration and a Runnable whose TaskRuns (the example's
// git-writer ClusterTask) commit it to git. The git-writer ClusterTemplate has no health
// rule, so, under DESIGN §4 as under Cartographer, its resource is AlwaysHealthy as soon as
// the Runnable exists: the Workload is Ready before the configuration reached git, and
// stays Ready when writing it fails. Only the Runnable says how the run went.
func TestGitWriterSupplyChain(t *testing.T) {
	ns := newNamespace(t, "gitwriter-sc")
	runnableReady := []cond{
		{"RunTemplateReady", "True", "Ready", ""},
		{"StampedObjectCondition", "True", "SucceededCondition", "All Steps have completed executing"},
		{"Ready", "True", "Ready", ""},
	}
	start := time.Now()
	applyAll(t, ns, render(t, "gitwriter-sc", "-f", "../shared/", "-f", "./values.yaml"))
	applyAll(t, ns, render(t, "gitwriter-sc", "-f", "."))
	eventually(t, time.Minute, func() (bool, string) {
		_, err := tryGet(gitRepositoryV1, "GitRepository", ns, "dev")
		return err == nil, fmt.Sprint(err)
	})
	playGitRepository(t, ns, "dev", revision)
	eventually(t, time.Minute, func() (bool, string) {
		img, err := tryGet(kpackV1alpha2, "Image", ns, "dev")
		if err != nil {
			return false, err.Error()
		}
		url, _, _ := unstructured.NestedString(img.Object, "spec", "source", "blob", "url")
		return url == artifactURL(ns, "dev"), "Image spec.source.blob.url " + url
	})
	playImage(t, ns, "dev", latestImage)
	config := gitWriterConfig(t, ns, latestImage)
	seen := map[string]bool{}
	run := gitWriterRun(t, ns, config, seen)

	// Nothing waits for the run: the Workload is Ready while the TaskRun has not ended.
	wl := waitWorkload(t, ns, "dev", readyWorkload)
	t.Logf("gitwriter-sc: applied to Workload Ready in %s (the TaskRun not yet ended)", time.Since(start).Round(time.Millisecond))
	runnableConds(t, ns, gitWriter, []cond{
		{"RunTemplateReady", "True", "Ready", ""},
		{"StampedObjectCondition", "Unknown", "Unknown", ""},
		{"Ready", "Unknown", "Unknown", ""},
	})
	for _, r := range []struct{ name, healthy string }{
		{"source-provider", "OutputsAvailable"},
		{"image-builder", "OutputsAvailable"},
		{"config-provider", "OutputsAvailable"},
		{"git-writer", "AlwaysHealthy"},
	} {
		rs := resource(wl.Status.Resources, r.name)
		if rs == nil {
			t.Fatalf("no resource %s in %+v", r.name, wl.Status.Resources)
		}
		want := []cond{{"ResourceSubmitted", "True", "ResourceSubmissionComplete", ""}, {"Healthy", "True", r.healthy, ""}, {"Ready", "True", "Ready", ""}}
		if ok, msg := sameConds(rs.Conditions, want); !ok {
			t.Errorf("resource %s: %s", r.name, msg)
		}
	}
	if got := outputs(resource(wl.Status.Resources, "config-provider")); got["config"] != config+"\n" {
		t.Errorf("config-provider outputs %v, want config %s", got, config)
	}

	playTaskRunStep(t, ns, run.GetName(), "git-clone-and-push", true)
	r := runnableConds(t, ns, gitWriter, runnableReady)
	t.Logf("gitwriter-sc: applied to the configuration written (Runnable Ready) in %s", time.Since(start).Round(time.Millisecond))
	if len(r.Status.Outputs) != 0 {
		t.Errorf("Runnable outputs %v, want none: the run template declares none", r.Status.Outputs)
	}
	waitWorkload(t, ns, "dev", readyWorkload)
	notRewritten(t, "supply-chain", ns, "dev",
		get(t, gitRepositoryV1, "GitRepository", ns, "dev"), get(t, kpackV1alpha2, "Image", ns, "dev"),
		get(t, "v1", "ConfigMap", ns, "dev"), get(t, "carto.run/v1alpha1", "Runnable", ns, gitWriter))

	// Failure: a new revision builds a new image, whose configuration git refuses (the
	// push fails).
	rev2 := "main@sha1:0fa1afe10fa1afe10fa1afe10fa1afe10fa1afe1"
	image2 := "a-project-id-i-own/an-image-prefix-i-like-dev@sha256:2a3b4c5d6e7f80912a3b4c5d6e7f80912a3b4c5d6e7f80912a3b4c5d6e7f8091"
	playGitRepository(t, ns, "dev", rev2)
	playImage(t, ns, "dev", image2)
	config = gitWriterConfig(t, ns, image2)
	run = gitWriterRun(t, ns, config, seen)
	playTaskRunStep(t, ns, run.GetName(), "git-clone-and-push", false)
	failed := `"step-git-clone-and-push" exited with code 1`
	runnableConds(t, ns, gitWriter, []cond{
		{"RunTemplateReady", "True", "Ready", ""},
		{"StampedObjectCondition", "False", "SucceededCondition", failed},
		{"Ready", "False", "SucceededCondition", failed},
	})
	// What the Workload reports once it saw the new configuration (it does not wait for
	// the run and does not hear of its end).
	wl = waitConfig(t, ns, config)
	if ok, msg := sameConds(resource(wl.Status.Resources, "git-writer").Conditions, []cond{
		{"ResourceSubmitted", "True", "ResourceSubmissionComplete", ""},
		{"Healthy", "True", "AlwaysHealthy", ""},
		{"Ready", "True", "Ready", ""},
	}); !ok {
		t.Errorf("git-writer after a failed run: %s", msg)
	}

	// Recovery: the next revision and image, whose configuration is pushed.
	recovering := time.Now()
	rev3 := "main@sha1:c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00"
	image3 := "a-project-id-i-own/an-image-prefix-i-like-dev@sha256:3b4c5d6e7f8091a23b4c5d6e7f8091a23b4c5d6e7f8091a23b4c5d6e7f8091a2"
	playGitRepository(t, ns, "dev", rev3)
	playImage(t, ns, "dev", image3)
	config = gitWriterConfig(t, ns, image3)
	run = gitWriterRun(t, ns, config, seen)
	playTaskRunStep(t, ns, run.GetName(), "git-clone-and-push", true)
	runnableConds(t, ns, gitWriter, runnableReady)
	waitConfig(t, ns, config)
	t.Logf("gitwriter-sc: recovered (new image to configuration written) in %s", time.Since(recovering).Round(time.Millisecond))
	if got := outputs(resource(workload(t, ns, "dev").Status.Resources, "source-provider")); got["revision"] != rev3+"\n" {
		t.Errorf("source-provider outputs %v, want revision %s", got, rev3)
	}
	// Every run is kept (the default retention is 10 of each): one per configuration.
	var l unstructured.UnstructuredList
	l.SetAPIVersion(tektonV1beta1)
	l.SetKind("TaskRunList")
	if err := k8s.List(ctx, &l, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(l.Items) != 3 {
		t.Errorf("%d TaskRuns, want 3", len(l.Items))
	}
}
