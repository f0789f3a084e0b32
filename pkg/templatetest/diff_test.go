package templatetest

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestDiff pins the unified diff kubectl carto test prints: hunk ranges that count the
// lines shown, three lines of context, and nothing after the last line of the object.
func TestDiff(t *testing.T) {
	object := func(data map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": data}}
	}
	tests := []struct {
		name             string
		expected, actual *unstructured.Unstructured
		want             string
	}{
		{"equal", object(map[string]any{"a": "1"}), object(map[string]any{"a": "1"}), ""},
		{"a line added, context to the last line", object(map[string]any{"a": "1"}), object(map[string]any{"a": "1", "b": "2"}),
			"--- expected\n+++ actual\n@@ -1,4 +1,5 @@\n apiVersion: v1\n data:\n   a: \"1\"\n+  b: \"2\"\n kind: ConfigMap\n"},
		{"numbers are not strings", object(map[string]any{"port": "9090"}), object(map[string]any{"port": int64(8080)}),
			"--- expected\n+++ actual\n@@ -1,4 +1,4 @@\n apiVersion: v1\n data:\n-  port: \"9090\"\n+  port: 8080\n kind: ConfigMap\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := diff(tt.expected, tt.actual)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("diff:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}
