package lint_test

import (
	"strings"
	"testing"
)

// yttFiles are a ClusterTemplate written in ytt (its body from line 6), a supply chain of it
// and a Workload.
func yttFiles(body string) string {
	return `apiVersion: carto.run/v1alpha1
kind: ClusterTemplate
metadata: {name: app}
spec:
  ytt: |
    ` + strings.ReplaceAll(strings.TrimSuffix(body, "\n"), "\n", "\n    ") + `
---
apiVersion: carto.run/v1alpha1
kind: ClusterSupplyChain
metadata: {name: chain}
spec:
  selector: {app: web}
  resources: [{name: app, templateRef: {kind: ClusterTemplate, name: app}}]
---
apiVersion: carto.run/v1alpha1
kind: Workload
metadata: {name: w, namespace: dev, labels: {app: web}}
spec: {}
`
}

const yttHeader = "#@ load(\"@ytt:data\", \"data\")\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: #@ data.values.workload.metadata.name\n"

func TestYTTChecks(t *testing.T) {
	tests := []struct {
		name string
		body string
		want []string
	}{
		{"valid", yttHeader + "data:\n  params: #@ str(len(data.values.params))\n", nil},
		{"starlark syntax", yttHeader + "#@ x = \ndata: {}\n", []string{
			`f.yaml:12: ClusterTemplate/app: spec.ytt: ytt: Error: - got newline, want primary expression stdin.yml:7 | data: {}`}},
		{"YAML", "a: 1\n  b: 2\n", []string{
			`f.yaml:7: ClusterTemplate/app: spec.ytt: ytt: Error: Unmarshaling YAML template 'stdin.yml': yaml: line 2: mapping values are not allowed in this context`}},
		{"a missing data value, for the owner that meets it", yttHeader + "data:\n  url: #@ data.values.workload.spec.source.git.url\n", []string{
			`f.yaml:12: ClusterTemplate/app: spec.ytt: stamping resource [app] for Workload/w: ytt: Error: - struct has no .source field or method in <toplevel> stdin.yml:7 | url: #@ data.values.workload.spec.source.git.url`}},
		{"several documents", yttHeader + "---\nkind: Secret\n", []string{
			`f.yaml:6: ClusterTemplate/app: warning: spec.ytt: the ytt template's output has 2 documents: only the first is stamped, the others are dropped`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { expectProblems(t, yttFiles(tt.body), tt.want) })
	}
}
