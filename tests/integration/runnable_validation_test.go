package integration

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cartov1alpha1 "github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// The ClusterRunTemplate's CRD rejects what Cartographer's webhook rejects, with the
// webhook's words; the Runnable's, what Cartographer's CRD rejects.
var runnableRejections = []rejection{
	{
		name: "run template without a kind",
		object: `apiVersion: carto.run/v1alpha1
kind: ClusterRunTemplate
spec:
  template: {apiVersion: v1, metadata: {generateName: x-}, spec: {}}`,
		wantPath:    "spec.template",
		wantMessage: "invalid template: failed to parse object: Object 'Kind' is missing",
	},
	{
		name: "run template with metadata.namespace",
		object: `apiVersion: carto.run/v1alpha1
kind: ClusterRunTemplate
spec:
  template: {apiVersion: v1, kind: Pod, metadata: {generateName: x-, namespace: other}, spec: {}}`,
		wantPath:    "spec.template.metadata.namespace",
		wantMessage: "invalid template: template should not set metadata.namespace on the child object",
	},
	{
		name: "run template without a spec",
		object: `apiVersion: carto.run/v1alpha1
kind: ClusterRunTemplate
spec:
  template: {apiVersion: v1, kind: ConfigMap, metadata: {generateName: x-}, data: {a: b}}`,
		wantPath:    "spec.template",
		wantMessage: "invalid template: object must have a spec",
	},
	{
		name: "run template without a template",
		object: `apiVersion: carto.run/v1alpha1
kind: ClusterRunTemplate
spec:
  outputs: {a: .status.a}`,
		wantPath:    "spec.template",
		wantMessage: "Required value",
	},
	{
		name: "runnable without a run template name",
		object: `apiVersion: carto.run/v1alpha1
kind: Runnable
metadata: {namespace: default}
spec:
  runTemplateRef: {kind: ClusterRunTemplate}`,
		wantPath:    "spec.runTemplateRef.name",
		wantMessage: "Required value",
	},
	{
		name: "runnable selector without matchingLabels",
		object: `apiVersion: carto.run/v1alpha1
kind: Runnable
metadata: {namespace: default}
spec:
  runTemplateRef: {name: t}
  selector: {resource: {apiVersion: v1, kind: ConfigMap}}`,
		wantPath:    "spec.selector.matchingLabels",
		wantMessage: "Required value",
	},
	{
		name: "runnable selector without resource",
		object: `apiVersion: carto.run/v1alpha1
kind: Runnable
metadata: {namespace: default}
spec:
  runTemplateRef: {name: t}
  selector: {matchingLabels: {a: b}}`,
		wantPath:    "spec.selector.resource",
		wantMessage: "Required value",
	},
	{
		name: "runnable retaining no failed runs",
		object: `apiVersion: carto.run/v1alpha1
kind: Runnable
metadata: {namespace: default}
spec:
  runTemplateRef: {name: t}
  retentionPolicy: {maxFailedRuns: 0, maxSuccessfulRuns: 1}`,
		wantPath:    "spec.retentionPolicy.maxFailedRuns",
		wantMessage: "should be greater than or equal to 1",
	},
	{
		name: "runnable retention policy with one count",
		object: `apiVersion: carto.run/v1alpha1
kind: Runnable
metadata: {namespace: default}
spec:
  runTemplateRef: {name: t}
  retentionPolicy: {maxFailedRuns: 2}`,
		wantPath:    "spec.retentionPolicy.maxSuccessfulRuns",
		wantMessage: "Required value",
	},
}

func TestCRDValidationRejectsRunnables(t *testing.T) {
	for _, tt := range runnableRejections {
		t.Run(tt.name, func(t *testing.T) {
			expectRejected(t, decodeOne(t, tt.object), tt)
		})
	}
}

// A Cartographer ClusterRunTemplate and Runnable are accepted as they are: the template keeps
// every field as written, and the Runnable's retentionPolicy defaults to 10 and 10.
func TestCRDValidationAcceptsRunnables(t *testing.T) {
	const raw = `{"apiVersion":"tekton.dev/v1beta1","kind":"PipelineRun","metadata":{"generateName":"$(runnable.metadata.name)$-"},` +
		`"spec":{"params":[{"name":"revision","value":"$(runnable.spec.inputs.revision)$"}],"pipelineRef":{"name":"$(selected.metadata.name)$"}}}`
	tpl := &cartov1alpha1.ClusterRunTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: uniqueName(t)},
		Spec: cartov1alpha1.RunTemplateSpec{
			Template: cartov1alpha1.RunTemplateObject{Raw: []byte(raw)},
			Outputs:  map[string]string{"revision": `.status.pipelineSpec.params[?(@.name=="revision")].default`},
		},
	}
	createAndCleanUp(t, tpl)
	got := &cartov1alpha1.ClusterRunTemplate{}
	if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(tpl), got); err != nil {
		t.Fatal(err)
	}
	if !jsonEqual(t, got.Spec.Template.Raw, []byte(raw)) {
		t.Errorf("template = %s, want %s", got.Spec.Template.Raw, raw)
	}

	run := decodeOne(t, `apiVersion: carto.run/v1alpha1
kind: Runnable
spec:
  runTemplateRef: {kind: ClusterRunTemplate, name: `+tpl.Name+`}
  selector: {resource: {apiVersion: tekton.dev/v1beta1, kind: Pipeline}, matchingLabels: {a: b}}
  inputs: {revision: abc, count: 3, nested: {list: [1, two]}}
  serviceAccountName: runner`)
	run.SetName(uniqueName(t))
	run.SetNamespace(corev1.NamespaceDefault)
	createAndCleanUp(t, run)
	typed := &cartov1alpha1.Runnable{}
	if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(run), typed); err != nil {
		t.Fatal(err)
	}
	if p := typed.Spec.RetentionPolicy; p == nil || p.MaxFailedRuns != 10 || p.MaxSuccessfulRuns != 10 {
		t.Errorf("retentionPolicy = %+v, want the default 10 and 10", p)
	}
	if got := string(typed.Spec.Inputs["nested"].Raw); got != `{"list":[1,"two"]}` {
		t.Errorf("inputs.nested = %s", got)
	}
}
