package manifest_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/manifest"
)

const stream = `# a comment
apiVersion: carto.run/v1alpha1
kind: ClusterSupplyChain
metadata:
  name: chain
spec:
  selector: {app: web}
  resources:
    - name: source
      templateRef: {kind: ClusterSourceTemplate, name: git}
    - name: app
      templateRef:
        kind: ClusterTemplate
        name: app
      params:
        - name: port
          value: 8080
---
---
apiVersion: v1
kind: List
items:
  - apiVersion: v1
    kind: ConfigMap
    metadata: {name: one}
  - apiVersion: v1
    kind: ConfigMap
    metadata: {name: two}
`

func TestParseKeepsLinesOfTheStream(t *testing.T) {
	docs, err := manifest.Parse("f.yaml", strings.NewReader(stream))
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 3 {
		t.Fatalf("got %d documents, want 3 (a List's items are documents)", len(docs))
	}
	tests := []struct {
		doc  int
		path string
		want string
	}{
		{0, "", "f.yaml:2"},
		{0, "metadata.name", "f.yaml:5"},
		{0, "spec.resources[1].templateRef.name", "f.yaml:14"},
		{0, "spec.resources[name=app].params[0].value", "f.yaml:17"},
		{0, "spec.resources[1].params[name=port]", "f.yaml:16"},
		{0, "spec.selector[app]", "f.yaml:7"},
		{0, "spec.resources[7].name", "f.yaml:9"}, // past the list: the list itself
		{0, "spec.serviceAccountRef.name", "f.yaml:7"},
		{1, "metadata.name", "f.yaml:25"},
		{2, "", "f.yaml:26"},
	}
	for _, tt := range tests {
		d := docs[tt.doc]
		if got := fmt.Sprintf("%s:%d", d.File, manifest.Lookup(d.Node, tt.path).YNode().Line); got != tt.want {
			t.Errorf("document %d, %q: position %s, want %s", tt.doc, tt.path, got, tt.want)
		}
	}
	obj, err := docs[0].Decode()
	if err != nil {
		t.Fatal(err)
	}
	sc, ok := obj.(*v1alpha1.ClusterSupplyChain)
	if !ok || len(sc.Spec.Resources) != 2 || sc.Spec.Resources[1].TemplateRef.Name != "app" {
		t.Errorf("decoded %#v, want the typed supply chain", obj)
	}
}

func TestNodeOrdersFields(t *testing.T) {
	n, err := manifest.Node(map[string]any{
		"status": map[string]any{"x": 1}, "data": map[string]any{"k": "v"}, "kind": "ConfigMap", "apiVersion": "v1",
		"metadata": map[string]any{"labels": map[string]any{"a": "b"}, "namespace": "ns", "name": "app"},
	})
	if err != nil {
		t.Fatal(err)
	}
	manifest.Comment(n, "first", "", "second")
	want := `# first
#
# second
apiVersion: v1
kind: ConfigMap
metadata:
  name: app
  namespace: ns
  labels:
    a: b
data:
  k: v
status:
  x: 1
`
	if got := n.MustString(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
