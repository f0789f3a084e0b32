package install

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/hack/release"
)

// The release manifest is config/default with the image pinned by digest: every CRD, the
// controller's namespace, ServiceAccount, RBAC and Deployment, each of which the API server
// takes when applied server-side (so each is validated by it, CRDs by their schemas too).
func TestReleaseManifest(t *testing.T) {
	const pinned = "registry.example/surveyor@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	if _, err := release.Render("../../config/default", "registry.example/surveyor:latest"); err == nil {
		t.Error("an image without a digest was taken")
	}
	crds, err := os.ReadDir("../../config/crd/bases")
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	var listed []string
	for _, obj := range applyRelease(t, pinned) {
		kinds[obj.GetKind()]++
		listed = append(listed, obj.GetKind()+"/"+obj.GetName())
	}
	t.Logf("%d objects: %s", len(listed), strings.Join(listed, ", "))
	if kinds["CustomResourceDefinition"] != len(crds) || kinds["Deployment"] != 1 || kinds["ServiceAccount"] != 1 || kinds["Namespace"] != 1 {
		t.Errorf("kinds %v: want %d CRDs, and one Namespace, ServiceAccount and Deployment", kinds, len(crds))
	}
	var dep appsv1.Deployment
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: "surveyor-system", Name: "surveyor-controller"}, &dep); err != nil {
		t.Fatal(err)
	}
	images := []string{}
	for _, c := range dep.Spec.Template.Spec.Containers {
		images = append(images, c.Image)
	}
	if !slices.Equal(images, []string{pinned}) {
		t.Errorf("the Deployment runs %v, want %s", images, pinned)
	}
}

// applyRelease renders the release manifest with image and applies each object server-side,
// as `kubectl apply --server-side` does; it returns the objects.
func applyRelease(t *testing.T, image string) []*unstructured.Unstructured {
	t.Helper()
	manifest, err := release.Render("../../config/default", image)
	if err != nil {
		t.Fatal(err)
	}
	d := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(manifest), 4096)
	var objs []*unstructured.Unstructured
	for {
		obj := &unstructured.Unstructured{}
		if err := d.Decode(&obj.Object); err != nil {
			break
		}
		if len(obj.Object) == 0 {
			continue
		}
		if err := k8s.Patch(ctx, obj, client.Apply, client.FieldOwner("surveyor-release-test"), client.ForceOwnership); err != nil {
			t.Errorf("applying %s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
		objs = append(objs, obj)
	}
	return objs
}
