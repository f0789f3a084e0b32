package lint_test

import (
	"context"
	"strings"
	"testing"

	"github.com/surveyor-dev/surveyor/pkg/lint"
	"github.com/surveyor-dev/surveyor/pkg/manifest"
)

// chain is a valid supply chain whose app resource reads one source and two configs;
// tests append the template of app.
const chain = `apiVersion: carto.run/v1alpha1
kind: ClusterSourceTemplate
metadata: {name: src}
spec:
  urlPath: .data.url
  revisionPath: .data.revision
  template:
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: $(workload.metadata.name)$-src}
    data: {url: "https://example.com/x.git", revision: main}
---
apiVersion: carto.run/v1alpha1
kind: ClusterConfigTemplate
metadata: {name: cfg}
spec:
  configPath: .data
  template:
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: $(workload.metadata.name)$-cfg}
    data: {a: b}
---
apiVersion: carto.run/v1alpha1
kind: ClusterSupplyChain
metadata: {name: chain}
spec:
  selector: {app: web}
  resources:
    - name: source
      templateRef: {kind: ClusterSourceTemplate, name: src}
    - name: one
      templateRef: {kind: ClusterConfigTemplate, name: cfg}
    - name: two
      templateRef: {kind: ClusterConfigTemplate, name: cfg}
    - name: app
      templateRef:
        kind: ClusterTemplate
        options:
          - name: app
            selector: {matchLabels: {app: web}}
      sources: [{name: code, resource: source}]
      configs: [{name: first, resource: one}, {name: second, resource: two}]
---
`

// appTemplate is the ClusterTemplate app with data as its stamped ConfigMap's data.
func appTemplate(data string) string {
	return `apiVersion: carto.run/v1alpha1
kind: ClusterTemplate
metadata: {name: app}
spec:
  template:
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: $(workload.metadata.name)$}
    data: ` + data + "\n"
}

func TestChecks(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string
	}{
		{"valid", chain + appTemplate(`{url: $(sources.code.url)$, a: $(configs.first.config.a)$, b: "$(configs.second.config)$"}`), nil},
		{"unknown root", chain + appTemplate(`{name: $(wrkload.metadata.name)$}`), []string{
			`f.yaml:53: ClusterTemplate/app: spec.template.data.name: tag $(wrkload.metadata.name)$ reads "wrkload", which no template's context has: it has workload, deliverable, params, sources, images, configs, deployment, source, image, config, labels`}},
		{"input field", chain + appTemplate(`{url: $(sources.code.uri)$}`), []string{
			`f.yaml:53: ClusterTemplate/app: spec.template.data.url: tag $(sources.code.uri)$ reads [uri], which sources inputs do not have: they have url, revision, name`}},
		{"input name", chain + appTemplate(`{a: "$(configs.third.config)$"}`), []string{
			`f.yaml:40: ClusterSupplyChain/chain: spec.resources[3].templateRef.options[0].name: template ClusterTemplate/app reads $(configs.third.config)$ (at spec.template.data.a), but resource [app] has no configs input named [third]`}},
		{"singular of several", chain + appTemplate(`{a: "$(config)$"}`), []string{
			`f.yaml:40: ClusterSupplyChain/chain: spec.resources[3].templateRef.options[0].name: template ClusterTemplate/app reads $(config)$ (at spec.template.data.a), which needs exactly one configs input, and resource [app] has 2`}},
		{"undeclared param", chain + appTemplate(`{a: "$(params['port'])$"}`), []string{
			`f.yaml:40: ClusterSupplyChain/chain: spec.resources[3].templateRef.options[0].name: template ClusterTemplate/app reads $(params['port'])$ (at spec.template.data.a), which neither it, the supply chain nor the resource declares: only an owner that gives it can be stamped`}},
		{"options tie and pass-through", strings.Replace(chain, `            selector: {matchLabels: {app: web}}`, `            selector: {matchLabels: {app: web}}
          - passThrough: nothing
            selector: {matchLabels: {app: web}}`, 1) + appTemplate(`{a: b}`), []string{
			`f.yaml:42: ClusterSupplyChain/chain: spec.resources[3].templateRef.options[1].passThrough: resource [app] passes through input [nothing], which is not among its inputs`,
			`f.yaml:43: ClusterSupplyChain/chain: spec.resources[3].templateRef.options[1].selector: options "app" and "passThrough=nothing" of resource [app] have the same selector: no owner can choose between them`}},
		{"unknown field", strings.Replace(chain, "  selector: {app: web}", "  selector: {app: web}\n  serviceAccount: x", 1) + appTemplate(`{a: b}`), []string{
			`f.yaml:29: ClusterSupplyChain/chain: spec.serviceAccount: unknown field: the API server drops it`}},
		{"immutable with a name", chain + strings.Replace(appTemplate(`{a: b}`), "spec:\n", "spec:\n  lifecycle: immutable\n", 1), []string{
			`f.yaml:53: ClusterTemplate/app: spec.template.metadata: a template with lifecycle immutable must set metadata.generateName, not metadata.name`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { expectProblems(t, tt.yaml, tt.want) })
	}
}

// expectProblems lints yaml, the file f.yaml, and checks it has exactly the problems want.
func expectProblems(t *testing.T, yaml string, want []string) {
	t.Helper()
	docs, err := manifest.Parse("f.yaml", strings.NewReader(yaml))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range lint.Lint(context.Background(), docs) {
		got = append(got, p.String())
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
