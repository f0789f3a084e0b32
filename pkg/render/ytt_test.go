package render_test

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/render"
	"github.com/surveyor-dev/surveyor/pkg/render/ytt"
)

// yttChain is a supply chain of one ClusterTemplate written in ytt, and a Workload it selects.
func yttChain(t *testing.T, source string) render.Input {
	t.Helper()
	var tpl v1alpha1.ClusterTemplate
	var chain v1alpha1.ClusterSupplyChain
	var workload v1alpha1.Workload
	for _, doc := range []struct {
		into any
		yaml string
	}{
		{&tpl, "metadata: {name: app}\nspec:\n  ytt: |\n    " + strings.ReplaceAll(source, "\n", "\n    ")},
		{&chain, "metadata: {name: chain, generation: 1}\nspec: {selector: {app: web}, resources: [{name: app, templateRef: {kind: ClusterTemplate, name: app}}]}\nstatus: {observedGeneration: 1}"},
		{&workload, "metadata: {name: w, namespace: dev, uid: u1, labels: {app: web}}\nspec: {params: [{name: port, value: \"8080\"}]}"},
	} {
		if err := yaml.Unmarshal([]byte(doc.yaml), doc.into); err != nil {
			t.Fatal(err)
		}
	}
	return render.Input{Owner: &workload, Objects: []v1alpha1.Object{&tpl, &chain}, YTT: ytt.InProcess{Timeout: ytt.Timeout}}
}

func TestRenderYTT(t *testing.T) {
	const prefix = "unable to stamp object for resource [app] for template [ClusterTemplate/app] in supply chain [chain]: "
	tests := []struct {
		name    string
		source  string
		want    string // the stamped object's data.v, or
		wantErr string // ResourceSubmitted's message
	}{
		{
			name:   "data values",
			source: "#@ load(\"@ytt:data\", \"data\")\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata:\n  v: #@ data.values.params.port + type(data.values.params.port) + data.values.labels[\"carto.run/resource-name\"]",
			want:   "8080stringapp",
		},
		{
			name:   "not $(...)$-interpolated",
			source: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {v: $(workload.metadata.name)$}",
			want:   "$(workload.metadata.name)$",
		},
		{
			name:   "the first document wins",
			source: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {v: first}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: y}\ndata: {v: second}",
			want:   "first",
		},
		{
			name:    "a ytt error",
			source:  "#@ load(\"@ytt:data\", \"data\")\nkind: #@ data.values.params.missing",
			wantErr: prefix + "unable to apply ytt template: ytt: Error: \n- struct has no .missing field or method\n    in <toplevel>\n      stdin.yml:2 | kind: #@ data.values.params.missing\n",
		},
		{
			name:    "no kind",
			source:  "apiVersion: v1\nmetadata: {name: x}",
			wantErr: prefix + `Object 'Kind' is missing in '{"apiVersion":"v1","metadata":{"name":"x"}}'`,
		},
		{
			name:    "empty output",
			source:  "#@ if False:\na: 1\n#@ end",
			wantErr: prefix + "Object 'Kind' is missing in 'null'",
		},
		{
			name:    "another namespace",
			source:  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: prod}",
			wantErr: prefix + "cannot set namespace in resource template",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := render.Render(yttChain(t, tt.source))
			if err != nil {
				t.Fatal(err)
			}
			res := out.Resources[0]
			if tt.wantErr != "" {
				if res.Object != nil || res.Submitted.Status != metav1.ConditionFalse || res.Submitted.Reason != v1alpha1.ReasonTemplateStampFailure || res.Submitted.Message != tt.wantErr {
					t.Fatalf("ResourceSubmitted = %+v, want TemplateStampFailure %q", res.Submitted, tt.wantErr)
				}
				return
			}
			if res.Object == nil {
				t.Fatalf("nothing stamped: %+v", res.Submitted)
			}
			obj := res.Object
			if got := obj.Object["data"].(map[string]any)["v"]; got != tt.want {
				t.Errorf("data.v = %v, want %v", got, tt.want)
			}
			if obj.GetNamespace() != "dev" || obj.GetLabels()[v1alpha1.LabelWorkloadName] != "w" || len(obj.GetOwnerReferences()) != 1 || obj.GetAnnotations()[render.AnnotationStampDigest] == "" {
				t.Errorf("the object is not made the Workload's: %v", obj.Object)
			}
		})
	}
}

// Labels the template sets are kept, and Surveyor's win a clash.
func TestRenderYTTMergesLabels(t *testing.T) {
	out, err := render.Render(yttChain(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  namespace: dev\n  labels: {mine: kept, carto.run/workload-name: lost}"))
	if err != nil {
		t.Fatal(err)
	}
	labels := out.Resources[0].Object.GetLabels()
	if labels["mine"] != "kept" || labels[v1alpha1.LabelWorkloadName] != "w" {
		t.Errorf("labels = %v", labels)
	}
}

// A ytt error quoting a Secret-derived input (here through fail()) reaches no status: the
// stamp failure is redacted as any other.
func TestYTTErrorQuotingASecretIsRedacted(t *testing.T) {
	in := yttChain(t, "#@ load(\"@ytt:data\", \"data\")\n#@ fail(\"token is \" + data.values.config.token)\nkind: ConfigMap\n")
	owner, err := render.NewOwner(in.Owner)
	if err != nil {
		t.Fatal(err)
	}
	tpl := in.Objects[0].(*v1alpha1.ClusterTemplate)
	bp := render.BlueprintOf(in.Objects[1].(*v1alpha1.ClusterSupplyChain))
	bp.Resources[0].Configs = []v1alpha1.ResourceReference{{Name: "secret", Resource: "creds"}}
	pass := &render.Pass{
		Owner: owner, Blueprint: bp, YTT: ytt.InProcess{},
		Template: func(kind, name string) (v1alpha1.Template, error) { return tpl, nil },
		Done:     map[string]*render.Result{"creds": {Secret: true, Values: map[string]any{"config": map[string]any{"token": "s3cr3t-t0ken-value"}}}},
	}
	res, err := pass.Stamp(&bp.Resources[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Object != nil || !strings.Contains(res.Submitted.Message, "unable to apply ytt template") || strings.Contains(res.Submitted.Message, "s3cr3t") {
		t.Errorf("ResourceSubmitted = %+v, want the ytt failure without the secret", res.Submitted)
	}
}

// Output JSON cannot hold says where it is, in words (not Go's %!s(<nil>)).
func TestDocumentsWithKeysJSONCannotHold(t *testing.T) {
	for out, want := range map[string]string{
		"null: null\n":                 "reading the output of the ytt template: document 1: line 1 has a map key that is null; object keys must be strings",
		"a:\n  ~: 1\n":                 "reading the output of the ytt template: document 1: line 2 has a map key that is null; object keys must be strings",
		"---\nk: v\n---\n? [a]\n: b\n": "reading the output of the ytt template: document 2: line 1 has a map key that is not a scalar; object keys must be strings",
	} {
		if _, err := render.Documents([]byte(out)); err == nil || err.Error() != want {
			t.Errorf("Documents(%q) = %v, want %q", out, err, want)
		}
	}
	docs, err := render.Documents([]byte("1: one\ntrue: yes\n---\n"))
	if err != nil || len(docs) != 1 || string(docs[0]) != `{"1":"one","true":true}` {
		t.Errorf("Documents with scalar keys = %q, %v", docs, err)
	}
}
