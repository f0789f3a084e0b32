package examples

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/hack/tools"
)

// decode splits YAML documents into objects, skipping empty ones.
func decode(data []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objs []*unstructured.Unstructured
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return objs, nil
			}
			return nil, err
		}
		if len(m) > 0 {
			objs = append(objs, &unstructured.Unstructured{Object: m})
		}
	}
}

// render runs ytt in the example's directory (examples/<example> of the pinned
// Cartographer module) with args, as the example's README does.
func render(t *testing.T, example string, args ...string) []*unstructured.Unstructured {
	t.Helper()
	dir, err := tools.SourceDir("cartographer")
	if err != nil {
		t.Fatal(err)
	}
	ytt, err := tools.Path("ytt", io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(ytt, append([]string{"--ignore-unknown-comments"}, args...)...)
	cmd.Dir, cmd.Stderr = filepath.Join(dir, "examples", example), &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ytt %s in %s: %v: %s", strings.Join(args, " "), cmd.Dir, err, stderr.String())
	}
	objs, err := decode(out)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// newNamespace creates a namespace for one example; its objects go with it.
func newNamespace(t *testing.T, name string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: name + "-"}}
	if err := k8s.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k8s.Delete(ctx, ns) })
	return ns.Name
}

// applyAll applies the objects server-side as an admin, the namespaced ones in ns, as
// kapp deploy or kubectl apply would in the README, and deletes the cluster-scoped ones
// when the test ends.
func applyAll(t *testing.T, ns string, objs []*unstructured.Unstructured) {
	t.Helper()
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		mapping, err := k8s.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			t.Fatalf("mapping %s: %v", gvk, err)
		}
		if mapping.Scope.Name() == "namespace" {
			o.SetNamespace(ns)
		}
		if err := k8s.Patch(ctx, o, client.Apply, client.FieldOwner("examples-test"), client.ForceOwnership); err != nil {
			t.Fatalf("applying %s %s: %v", gvk.Kind, o.GetName(), err)
		}
		if o.GetNamespace() == "" {
			t.Cleanup(func() { _ = k8s.Delete(ctx, o) })
		}
	}
}

// get reads an object of apiVersion and kind, failing the test on any error.
func get(t *testing.T, apiVersion, kind, ns, name string) *unstructured.Unstructured {
	t.Helper()
	u, err := tryGet(apiVersion, kind, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func tryGet(apiVersion, kind, ns, name string) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u)
	return u, err
}

// writeStatus merges status into the object's status subresource, as the tool's
// controller writes it; observedGeneration is the object's current generation.
func writeStatus(t *testing.T, apiVersion, kind, ns, name string, status map[string]any) {
	t.Helper()
	u := get(t, apiVersion, kind, ns, name)
	status["observedGeneration"] = u.GetGeneration()
	patch, err := json.Marshal(map[string]any{"status": status})
	if err != nil {
		t.Fatal(err)
	}
	if err := k8s.Status().Patch(ctx, u, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatalf("writing the status of %s %s: %v", kind, name, err)
	}
}

// condition returns the status condition of type typ of an unstructured object, or nil.
func condition(u *unstructured.Unstructured, typ string) map[string]any {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == typ {
			return m
		}
	}
	return nil
}

// cond is a condition as these tests assert it: type, status, reason and, when not
// empty, message.
type cond struct{ Type, Status, Reason, Message string }

func (c cond) String() string {
	return fmt.Sprintf("%s=%s %s %q", c.Type, c.Status, c.Reason, c.Message)
}

// conds reduces metav1 conditions to what the tests compare; a want with an empty
// message matches any message.
func conds(got []metav1.Condition, want []cond) []cond {
	out := make([]cond, len(got))
	for i, c := range got {
		out[i] = cond{c.Type, string(c.Status), c.Reason, c.Message}
		if i < len(want) && want[i].Message == "" {
			out[i].Message = ""
		}
	}
	return out
}

// sameConds says whether got equals want, with what it saw when not.
func sameConds(got []metav1.Condition, want []cond) (bool, string) {
	g := conds(got, want)
	return fmt.Sprint(g) == fmt.Sprint(want), fmt.Sprintf("conditions %v, want %v", g, want)
}
