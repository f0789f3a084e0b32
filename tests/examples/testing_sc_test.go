package examples

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestTestingSupplyChain runs examples/testing-sc: basic-sc with a Runnable between the
// source and the image that runs the developer's tests as a TaskRun.
func TestTestingSupplyChain(t *testing.T) {
	ns := newNamespace(t, "testing-sc")
	start := time.Now()
	applyAll(t, ns, render(t, "testing-sc", "-f", "../shared/", "-f", "./values.yaml"))
	applyAll(t, ns, render(t, "testing-sc", "-f", "."))
	eventually(t, time.Minute, func() (bool, string) {
		_, err := tryGet(gitRepositoryV1, "GitRepository", ns, "dev")
		return err == nil, fmt.Sprint(err)
	})

	// Failure: the tests of the first revision fail, so the Runnable has no outputs and the
	// image cannot be built.
	playGitRepository(t, ns, "dev", revision)
	seen := map[string]bool{}
	run := newTaskRun(t, ns, "dev", seen)
	if params, _, _ := unstructured.NestedSlice(run.Object, "spec", "params"); fmt.Sprint(params) !=
		fmt.Sprintf("[map[name:blob-url value:%s] map[name:blob-revision value:%s]]", artifactURL(ns, "dev"), revision) {
		t.Errorf("TaskRun spec.params %v", params)
	}
	playTaskRun(t, ns, run.GetName(), false)
	waitWorkload(t, ns, "dev", func(int64) []cond {
		return []cond{
			{"SupplyChainReady", "True", "Ready", ""},
			{"ResourcesSubmitted", "Unknown", "MissingValueAtPath", "waiting to read value [.status.outputs.url] from object [Runnable/dev]"},
			{"ResourcesHealthy", "Unknown", "HealthyConditionRule", ""},
			{"Ready", "Unknown", "MissingValueAtPath", "waiting to read value [.status.outputs.url] from object [Runnable/dev]"},
			{"Available", "False", "NotYetAvailable", ""},
		}
	})
	if _, err := tryGet(kpackV1alpha2, "Image", ns, "dev"); err == nil {
		t.Error("the Image was stamped although the tests failed")
	}

	// Recovery: source-controller fetches a fixed revision, whose tests pass.
	fixed := "main@sha1:0fa1afe10fa1afe10fa1afe10fa1afe10fa1afe1"
	playGitRepository(t, ns, "dev", fixed)
	run = newTaskRun(t, ns, "dev", seen)
	playTaskRun(t, ns, run.GetName(), true)
	eventually(t, time.Minute, func() (bool, string) {
		img, err := tryGet(kpackV1alpha2, "Image", ns, "dev")
		if err != nil {
			return false, err.Error()
		}
		url, _, _ := unstructured.NestedString(img.Object, "spec", "source", "blob", "url")
		return url == artifactURL(ns, "dev"), "Image spec.source.blob.url " + url
	})
	playImage(t, ns, "dev", latestImage)
	wl := waitWorkload(t, ns, "dev", readyWorkload)
	t.Logf("testing-sc: applied to Ready in %s (one failed and one passing TaskRun on the way)", time.Since(start).Round(time.Millisecond))
	if got := outputs(resource(wl.Status.Resources, "source-tester")); got["revision"] != fixed+"\n" || got["url"] != artifactURL(ns, "dev")+"\n" {
		t.Errorf("source-tester outputs %v", got)
	}
	if got := outputs(resource(wl.Status.Resources, "image-builder")); got["image"] != latestImage+"\n" {
		t.Errorf("image-builder outputs %v", got)
	}
	notRewritten(t, "supply-chain", ns, "dev",
		get(t, gitRepositoryV1, "GitRepository", ns, "dev"), get(t, "carto.run/v1alpha1", "Runnable", ns, "dev"),
		get(t, kpackV1alpha2, "Image", ns, "dev"), get(t, kappV1alpha1, "App", ns, "dev"))
}
