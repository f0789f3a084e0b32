package integration

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	cartov1alpha1 "github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// These tests pin the validation the CRDs in config/crd/bases promise (DESIGN §2): the API server,
// not the controller, rejects malformed rules, and its message names the field and says what is wrong.

// rejection is an object the API server must refuse with 422 Invalid, naming path and message.
type rejection struct {
	name        string
	object      string // YAML without metadata.name, which the test fills in
	wantPath    string
	wantMessage string
}

// templateKinds are every template kind with the spec fields it needs besides TemplateSpec.
var templateKinds = []struct {
	kind  string
	extra string
}{
	{cartov1alpha1.KindClusterSourceTemplate, "urlPath: .data.url\nrevisionPath: .data.revision"},
	{cartov1alpha1.KindClusterImageTemplate, "imagePath: .data.image"},
	{cartov1alpha1.KindClusterConfigTemplate, "configPath: .data"},
	{cartov1alpha1.KindClusterDeploymentTemplate, "observedCompletion: {succeeded: {key: .status.phase, value: Succeeded}}"},
	{cartov1alpha1.KindClusterTemplate, ""},
}

// templateRejections are TemplateSpec fragments every template kind must reject.
var templateRejections = []rejection{
	{
		name:        "neither template nor ytt",
		object:      "template: null",
		wantPath:    "spec",
		wantMessage: "invalid template: must specify one of template or ytt, found neither",
	},
	{
		name:        "an empty ytt and no template",
		object:      "template: null\nytt: ''",
		wantPath:    "spec",
		wantMessage: "invalid template: must specify one of template or ytt, found neither",
	},
	{
		name:        "template and ytt",
		object:      "ytt: 'kind: ConfigMap'",
		wantPath:    "spec",
		wantMessage: "invalid template: must specify one of template or ytt, found both",
	},
	{
		name:        "retention policy on a mutable template",
		object:      "retentionPolicy: {maxFailedRuns: 1, maxSuccessfulRuns: 1}",
		wantPath:    "spec.retentionPolicy",
		wantMessage: "retentionPolicy requires lifecycle immutable or tekton",
	},
	{
		name:        "unknown lifecycle",
		object:      "lifecycle: forever",
		wantPath:    "spec.lifecycle",
		wantMessage: "Unsupported value",
	},
	{
		name:        "health rule with two forms",
		object:      "healthyConditionRule: {alwaysHealthy: {}, singleConditionType: Ready}",
		wantPath:    "spec.healthyConditionRule",
		wantMessage: "exactly one of alwaysHealthy, singleConditionType or multiMatch must be set",
	},
	{
		name: "health rule with three forms",
		object: `healthyConditionRule:
  alwaysHealthy: {}
  singleConditionType: Ready
  multiMatch: {healthy: {matchConditions: [{type: Ready, status: "True"}]}, unhealthy: {matchConditions: [{type: Ready, status: "False"}]}}`,
		wantPath:    "spec.healthyConditionRule",
		wantMessage: "exactly one of alwaysHealthy, singleConditionType or multiMatch must be set",
	},
	{
		name:        "health rule with no form",
		object:      "healthyConditionRule: {}",
		wantPath:    "spec.healthyConditionRule",
		wantMessage: "exactly one of alwaysHealthy, singleConditionType or multiMatch must be set",
	},
	{
		name:        "Cartographer healthRule with two forms",
		object:      "healthRule: {alwaysHealthy: {}, singleConditionType: Ready}",
		wantPath:    "spec.healthRule",
		wantMessage: "exactly one of alwaysHealthy, singleConditionType or multiMatch must be set",
	},
	{
		name:        "multiMatch with empty healthy",
		object:      `healthyConditionRule: {multiMatch: {healthy: {}, unhealthy: {matchConditions: [{type: Ready, status: "False"}]}}}`,
		wantPath:    "spec.healthyConditionRule.multiMatch.healthy",
		wantMessage: "must set at least one of matchConditions, matchFields or matchCEL",
	},
	{
		name:        "multiMatch with empty unhealthy",
		object:      `healthyConditionRule: {multiMatch: {healthy: {matchConditions: [{type: Ready, status: "True"}]}, unhealthy: {}}}`,
		wantPath:    "spec.healthyConditionRule.multiMatch.unhealthy",
		wantMessage: "must set at least one of matchConditions, matchFields or matchCEL",
	},
	{
		name:        "multiMatch with only empty lists in healthy",
		object:      `healthyConditionRule: {multiMatch: {healthy: {matchConditions: [], matchFields: [], matchCEL: []}, unhealthy: {matchCEL: [{expression: "false"}]}}}`,
		wantPath:    "spec.healthyConditionRule.multiMatch.healthy",
		wantMessage: "must set at least one of matchConditions, matchFields or matchCEL",
	},
	{
		name:        "multiMatch without unhealthy",
		object:      `healthyConditionRule: {multiMatch: {healthy: {matchConditions: [{type: Ready, status: "True"}]}}}`,
		wantPath:    "spec.healthyConditionRule.multiMatch.unhealthy",
		wantMessage: "Required value",
	},
	{
		name: "matchFields In without values",
		object: `healthyConditionRule:
  multiMatch:
    healthy: {matchFields: [{key: .status.phase, operator: In}]}
    unhealthy: {matchConditions: [{type: Ready, status: "False"}]}`,
		wantPath:    "spec.healthyConditionRule.multiMatch.healthy.matchFields[0].values",
		wantMessage: "values must be set when operator is In or NotIn",
	},
	{
		name: "matchFields NotIn without values",
		object: `healthyConditionRule:
  multiMatch:
    healthy: {matchConditions: [{type: Ready, status: "True"}]}
    unhealthy: {matchFields: [{key: .status.phase, operator: In, values: [Failed]}, {key: .status.phase, operator: NotIn}]}`,
		wantPath:    "spec.healthyConditionRule.multiMatch.unhealthy.matchFields[1].values",
		wantMessage: "values must be set when operator is In or NotIn",
	},
	{
		name: "matchFields In with empty values",
		object: `healthRule:
  multiMatch:
    healthy: {matchFields: [{key: .status.phase, operator: In, values: []}]}
    unhealthy: {matchConditions: [{type: Ready, status: "False"}]}`,
		wantPath:    "spec.healthRule.multiMatch.healthy.matchFields[0].values",
		wantMessage: "values must be set when operator is In or NotIn",
	},
	{
		name: "matchFields Exists with values",
		object: `healthyConditionRule:
  multiMatch:
    healthy: {matchFields: [{key: .status.phase, operator: Exists, values: [Running]}]}
    unhealthy: {matchConditions: [{type: Ready, status: "False"}]}`,
		wantPath:    "spec.healthyConditionRule.multiMatch.healthy.matchFields[0].values",
		wantMessage: "values must not be set when operator is Exists or DoesNotExist",
	},
	{
		name: "matchFields with an unknown operator",
		object: `healthyConditionRule:
  multiMatch:
    healthy: {matchFields: [{key: .status.phase, operator: Equals, values: [Running]}]}
    unhealthy: {matchConditions: [{type: Ready, status: "False"}]}`,
		wantPath:    "spec.healthyConditionRule.multiMatch.healthy.matchFields[0].operator",
		wantMessage: `Unsupported value: "Equals"`,
	},
	{
		name:        "template with metadata.namespace",
		object:      "template: {apiVersion: v1, kind: ConfigMap, metadata: {name: x, namespace: $(workload.metadata.namespace)$}}",
		wantPath:    "spec.template.metadata.namespace",
		wantMessage: "template must not set metadata.namespace: stamped objects always go to the owner's namespace",
	},
	{
		name:        "healthyConditionRule and healthRule both set",
		object:      "healthyConditionRule: {alwaysHealthy: {}}\nhealthRule: {alwaysHealthy: {}}",
		wantPath:    "spec.healthyConditionRule",
		wantMessage: "set healthyConditionRule or healthRule, not both",
	},
	{
		name:        "CEL condition rule without expressions",
		object:      "conditionRules: [{condition: Complete, type: CEL}]",
		wantPath:    "spec.conditionRules[0].celExpressions",
		wantMessage: "celExpressions must have at least one expression when type is CEL",
	},
	{
		name:        "CEL condition rule with an empty expression list",
		object:      "conditionRules: [{type: WellKnownCompletions}, {condition: Complete, type: CEL, celExpressions: []}]",
		wantPath:    "spec.conditionRules[1].celExpressions",
		wantMessage: "celExpressions must have at least one expression when type is CEL",
	},
	{
		name:        "CEL condition rule without condition",
		object:      `conditionRules: [{type: CEL, celExpressions: [{expression: "true"}]}]`,
		wantPath:    "spec.conditionRules[0].condition",
		wantMessage: "condition is required when type is CEL",
	},
	{
		name:        "WellKnownCompletions rule with expressions",
		object:      `conditionRules: [{type: WellKnownCompletions, celExpressions: [{expression: "true"}]}]`,
		wantPath:    "spec.conditionRules[0].celExpressions",
		wantMessage: "celExpressions must not be set when type is WellKnownCompletions",
	},
	{
		name:        "condition rule for a condition Surveyor sets",
		object:      `conditionRules: [{condition: Ready, type: CEL, celExpressions: [{expression: "true"}]}]`,
		wantPath:    "spec.conditionRules[0].condition",
		wantMessage: "condition must not be one Surveyor sets itself",
	},
	{
		name:        "condition rule of an unknown type",
		object:      `conditionRules: [{condition: Complete, type: Script}]`,
		wantPath:    "spec.conditionRules[0].type",
		wantMessage: `Unsupported value: "Script"`,
	},
}

// otherRejections are whole objects of the other kinds.
var otherRejections = []rejection{
	{
		name: "deployment template with observedMatches and observedCompletion",
		object: `apiVersion: carto.run/v1alpha1
kind: ClusterDeploymentTemplate
spec:
  template: {apiVersion: v1, kind: ConfigMap}
  observedMatches: [{input: spec.x, output: status.x}]
  observedCompletion: {succeeded: {key: status.phase, value: Succeeded}}`,
		wantPath:    "spec",
		wantMessage: "exactly one of observedMatches or observedCompletion must be set",
	},
	{
		name: "supply chain param with value and default",
		object: supplyChain(`params: [{name: replicas, value: 1, default: 2}]
resources: [{name: a, templateRef: {kind: ClusterTemplate, name: t}}]`),
		wantPath:    "spec.params[0]",
		wantMessage: "exactly one of value or default must be set",
	},
	{
		name: "supply chain param with neither value nor default",
		object: supplyChain(`params: [{name: replicas}]
resources: [{name: a, templateRef: {kind: ClusterTemplate, name: t}}]`),
		wantPath:    "spec.params[0]",
		wantMessage: "exactly one of value or default must be set",
	},
	{
		name:        "supply chain resource param with value and default",
		object:      supplyChain(`resources: [{name: a, templateRef: {kind: ClusterTemplate, name: t}, params: [{name: p, value: {a: 1}, default: "x"}]}]`),
		wantPath:    "spec.resources[0].params[0]",
		wantMessage: "exactly one of value or default must be set",
	},
	{
		name: "supply chain templateRef with name and options",
		object: supplyChain(`resources:
- name: a
  templateRef:
    kind: ClusterTemplate
    name: t
    options: [{name: t1, selector: {matchLabels: {a: b}}}, {name: t2, selector: {matchLabels: {a: c}}}]`),
		wantPath:    "spec.resources[0].templateRef",
		wantMessage: "exactly one of name or options must be set",
	},
	{
		name:        "supply chain templateRef with neither name nor options",
		object:      supplyChain(`resources: [{name: a, templateRef: {kind: ClusterTemplate}}]`),
		wantPath:    "spec.resources[0].templateRef",
		wantMessage: "exactly one of name or options must be set",
	},
	{
		name: "supply chain option with name and passThrough",
		object: supplyChain(`resources:
- name: a
  templateRef:
    kind: ClusterSourceTemplate
    options: [{name: t1, passThrough: source, selector: {matchLabels: {a: b}}}, {name: t2, selector: {matchLabels: {a: c}}}]`),
		wantPath:    "spec.resources[0].templateRef.options[0]",
		wantMessage: "exactly one of name or passThrough must be set",
	},
	{
		name:        "supply chain with a delivery-only template kind",
		object:      supplyChain(`resources: [{name: a, templateRef: {kind: ClusterDeploymentTemplate, name: t}}]`),
		wantPath:    "spec.resources[0].templateRef.kind",
		wantMessage: `Unsupported value: "ClusterDeploymentTemplate"`,
	},
	{
		name: "supply chain with duplicate resource names",
		object: supplyChain(`resources:
- {name: a, templateRef: {kind: ClusterTemplate, name: t}}
- {name: a, templateRef: {kind: ClusterTemplate, name: u}}`),
		wantPath:    "spec.resources[1]",
		wantMessage: "Duplicate value",
	},
	{
		name: "supply chain selectorMatchFields In without values",
		object: `apiVersion: carto.run/v1alpha1
kind: ClusterSupplyChain
spec:
  selectorMatchFields: [{key: spec.source.git.url, operator: In}]
  resources: [{name: a, templateRef: {kind: ClusterTemplate, name: t}}]`,
		wantPath:    "spec.selectorMatchFields[0].values",
		wantMessage: "values must be set when operator is In or NotIn",
	},
	{
		name: "delivery param with value and default",
		object: `apiVersion: carto.run/v1alpha1
kind: ClusterDelivery
spec:
  selector: {app: x}
  params: [{name: p, value: 1, default: 1}]
  resources: [{name: a, templateRef: {kind: ClusterDeploymentTemplate, name: t}}]`,
		wantPath:    "spec.params[0]",
		wantMessage: "exactly one of value or default must be set",
	},
	{
		name: "delivery with a supply-chain-only template kind",
		object: `apiVersion: carto.run/v1alpha1
kind: ClusterDelivery
spec:
  selector: {app: x}
  resources: [{name: a, templateRef: {kind: ClusterImageTemplate, name: t}}]`,
		wantPath:    "spec.resources[0].templateRef.kind",
		wantMessage: `Unsupported value: "ClusterImageTemplate"`,
	},
	{
		name: "workload with a negative ttlSecondsAfterFinished",
		object: `apiVersion: carto.run/v1alpha1
kind: Workload
metadata: {namespace: default}
spec: {ttlSecondsAfterFinished: -1}`,
		wantPath:    "spec.ttlSecondsAfterFinished",
		wantMessage: "should be greater than or equal to 0",
	},
	{
		name: "workload with git and image sources",
		object: `apiVersion: carto.run/v1alpha1
kind: Workload
metadata: {namespace: default}
spec: {source: {git: {url: https://example.com/a.git}, image: example.com/a:1}}`,
		wantPath:    "spec.source",
		wantMessage: "set source.git or source.image, not both",
	},
}

func TestCRDValidationRejectsTemplates(t *testing.T) {
	for _, kind := range templateKinds {
		t.Run(kind.kind, func(t *testing.T) {
			for _, tt := range templateRejections {
				t.Run(tt.name, func(t *testing.T) {
					expectRejected(t, templateObject(t, kind.kind, kind.extra, tt.object), tt)
				})
			}
		})
	}
}

func TestCRDValidationRejectsOtherKinds(t *testing.T) {
	for _, tt := range otherRejections {
		t.Run(tt.name, func(t *testing.T) {
			expectRejected(t, decodeOne(t, tt.object), tt)
		})
	}
}

// Every template kind accepts a valid spec using every rule form, so the rejections above are
// caused by the fragment under test and not by the scaffolding around it.
func TestCRDValidationAcceptsValidTemplates(t *testing.T) {
	valid := `healthyConditionRule:
  multiMatch:
    healthy:
      matchConditions: [{type: Ready, status: "True"}]
      matchFields: [{key: .status.phase, operator: In, values: [Running]}, {key: .status.error, operator: DoesNotExist}]
      matchCEL: [{expression: "object.status.ready == true", messageExpression: "'ready'"}]
    unhealthy:
      matchFields: [{key: .status.phase, operator: NotIn, values: [Running, Pending], messagePath: .status.message}]
params: [{name: replicas, default: 1}, {name: labels, default: {a: b}}]
conditionRules:
- type: WellKnownCompletions
- {condition: Complete, type: WellKnownCompletions}
- {condition: Migrated, type: CEL, celExpressions: [{expression: "object.status.migrated"}, {expression: "true"}], messageExpression: "'done'"}
template: {apiVersion: v1, kind: ConfigMap, metadata: {name: $(workload.metadata.name)$, labels: {a: b}}, data: {replicas: $(params.replicas)$}}`
	for _, kind := range templateKinds {
		t.Run(kind.kind, func(t *testing.T) {
			obj := templateObject(t, kind.kind, kind.extra, valid)
			obj.SetName(uniqueName(t))
			createAndCleanUp(t, obj)
		})
	}
}

// A ytt template in place of template is accepted by every template kind, and reads back
// without a template field.
func TestCRDValidationAcceptsYTTTemplates(t *testing.T) {
	for _, kind := range templateKinds {
		t.Run(kind.kind, func(t *testing.T) {
			obj := templateObject(t, kind.kind, kind.extra, "template: null\nytt: |\n  #@ load(\"@ytt:data\", \"data\")\n  kind: ConfigMap\n")
			obj.SetName(uniqueName(t))
			createAndCleanUp(t, obj)
			got := &unstructured.Unstructured{}
			got.SetGroupVersionKind(obj.GroupVersionKind())
			if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), got); err != nil {
				t.Fatal(err)
			}
			if _, ok := got.Object["spec"].(map[string]any)["template"]; ok {
				t.Errorf("spec.template = %v, want it absent", got.Object["spec"].(map[string]any)["template"])
			}
		})
	}
}

// healthRule, Cartographer's spelling, is accepted on its own and reads back through the typed API.
func TestCRDValidationHealthRuleRoundTrips(t *testing.T) {
	tests := []struct {
		name string
		rule cartov1alpha1.HealthRule
	}{
		{name: "alwaysHealthy", rule: cartov1alpha1.HealthRule{AlwaysHealthy: &cartov1alpha1.AlwaysHealthyRule{}}},
		{name: "singleConditionType", rule: cartov1alpha1.HealthRule{SingleConditionType: "Ready"}},
		{name: "multiMatch", rule: cartov1alpha1.HealthRule{MultiMatch: &cartov1alpha1.MultiMatchRule{
			Healthy: cartov1alpha1.MatchRule{
				MatchConditions: []cartov1alpha1.ConditionRequirement{{Type: "Ready", Status: metav1.ConditionTrue}},
			},
			Unhealthy: cartov1alpha1.MatchRule{
				MatchFields: []cartov1alpha1.HealthMatchFieldSelectorRequirement{{
					FieldSelectorRequirement: cartov1alpha1.FieldSelectorRequirement{
						Key: ".status.phase", Operator: cartov1alpha1.FieldSelectorOpIn, Values: []string{"Failed"},
					},
					MessagePath: ".status.message",
				}},
				MatchCEL: []cartov1alpha1.CELMatch{{Expression: "object.status.broken"}},
			},
		}}},
	}
	const raw = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"$(workload.metadata.name)$"},` +
		`"data":{"url":"$(source.url)$"},"extra":{"list":[1,"two",{"three":3}]}}`
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rule := tt.rule
			tmpl := &cartov1alpha1.ClusterTemplate{
				ObjectMeta: metav1.ObjectMeta{Name: uniqueName(t)},
				Spec: cartov1alpha1.TemplateSpec{
					Template:   &cartov1alpha1.TemplateObject{Raw: []byte(raw)},
					HealthRule: &rule,
				},
			}
			createAndCleanUp(t, tmpl)

			got := &cartov1alpha1.ClusterTemplate{}
			if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(tmpl), got); err != nil {
				t.Fatal(err)
			}
			if got.Spec.HealthyConditionRule != nil {
				t.Errorf("healthyConditionRule = %+v, want unset", got.Spec.HealthyConditionRule)
			}
			if !reflect.DeepEqual(got.Spec.HealthRule, &tt.rule) {
				t.Errorf("healthRule = %+v, want %+v", got.Spec.HealthRule, tt.rule)
			}
			if got.Spec.EffectiveHealthRule() != got.Spec.HealthRule {
				t.Error("EffectiveHealthRule() is not the healthRule")
			}
			if !jsonEqual(t, got.Spec.Template.Raw, []byte(raw)) {
				t.Errorf("template = %s, want %s", got.Spec.Template.Raw, raw)
			}
		})
	}
}

// Every object in samples/ is accepted. Namespaced objects go to a fresh namespace and cluster-scoped
// ones get a unique name, so the test neither collides with applied samples nor leaves anything behind.
func TestCRDValidationAcceptsSamples(t *testing.T) {
	files, err := filepath.Glob("../../samples/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no samples found in ../../samples")
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "crd-samples-"}}
	if err := k8sClient.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k8sClient.Delete(ctx, ns) })

	kinds := map[string]bool{}
	suffix := utilrand.String(5)
	for _, file := range files {
		for i, obj := range decodeFile(t, file) {
			kinds[obj.GetKind()] = true
			t.Run(filepath.Base(file)+"/"+obj.GetKind()+"/"+obj.GetName(), func(t *testing.T) {
				if obj.GetKind() == "Namespace" {
					t.Skipf("document %d is a Namespace; samples' namespaces may already exist", i)
				}
				namespaced, err := k8sClient.IsObjectNamespaced(obj)
				if err != nil {
					t.Fatal(err)
				}
				if namespaced {
					obj.SetNamespace(ns.Name)
				} else {
					obj.SetName(obj.GetName() + "-" + suffix)
				}
				createAndCleanUp(t, obj)

				// carto.run objects also decode into their Go types.
				if obj.GroupVersionKind().Group == cartov1alpha1.GroupName {
					typed, err := k8sClient.Scheme().New(obj.GroupVersionKind())
					if err != nil {
						t.Fatal(err)
					}
					if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), typed.(client.Object)); err != nil {
						t.Fatalf("reading %s back as its Go type: %v", obj.GetKind(), err)
					}
				}
			})
		}
	}
	for _, want := range []string{
		cartov1alpha1.KindClusterSourceTemplate, cartov1alpha1.KindClusterConfigTemplate,
		cartov1alpha1.KindClusterTemplate, cartov1alpha1.KindClusterSupplyChain, cartov1alpha1.KindWorkload,
		cartov1alpha1.KindClusterDeploymentTemplate, cartov1alpha1.KindClusterDelivery, cartov1alpha1.KindDeliverable,
	} {
		if !kinds[want] {
			t.Errorf("samples/ has no %s", want)
		}
	}
}

// expectRejected creates obj under a unique name and asserts a 422 naming tt's path and message.
func expectRejected(t *testing.T, obj *unstructured.Unstructured, tt rejection) {
	t.Helper()
	obj.SetName(uniqueName(t))
	err := k8sClient.Create(ctx, obj)
	if err == nil {
		t.Cleanup(func() { _ = k8sClient.Delete(ctx, obj) })
		t.Fatalf("the API server accepted %s, want it rejected with %q", obj.GetKind(), tt.wantMessage)
	}
	if !apierrors.IsInvalid(err) {
		t.Fatalf("error = %v, want an Invalid (422) error", err)
	}
	for _, want := range []string{tt.wantPath + ":", tt.wantMessage} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err.Error(), want)
		}
	}
}

// createAndCleanUp creates obj, failing the test on error, and deletes it when the test ends.
func createAndCleanUp(t *testing.T, obj client.Object) {
	t.Helper()
	if err := k8sClient.Create(ctx, obj); err != nil {
		t.Fatalf("creating %s %q: %v", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName(), err)
	}
	t.Cleanup(func() {
		if err := k8sClient.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting %q: %v", obj.GetName(), err)
		}
	})
}

// templateObject builds a template of kind with spec = extra + fragment, fragment winning, and a
// valid default template object.
func templateObject(t *testing.T, kind, extra, fragment string) *unstructured.Unstructured {
	t.Helper()
	spec := map[string]any{
		"template": map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "$(workload.metadata.name)$"}},
	}
	for _, part := range []string{extra, fragment} {
		var fields map[string]any
		if err := yaml.Unmarshal([]byte(part), &fields); err != nil {
			t.Fatalf("test fragment %q: %v", part, err)
		}
		for k, v := range fields {
			spec[k] = v
		}
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	obj.SetAPIVersion(cartov1alpha1.GroupVersion.String())
	obj.SetKind(kind)
	return obj
}

// supplyChain wraps a spec fragment into a ClusterSupplyChain with a label selector.
func supplyChain(spec string) string {
	return "apiVersion: carto.run/v1alpha1\nkind: ClusterSupplyChain\nspec:\n  selector: {app: x}\n" +
		"  " + strings.ReplaceAll(spec, "\n", "\n  ")
}

// decodeOne decodes a single YAML object.
func decodeOne(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &obj.Object); err != nil {
		t.Fatalf("test object %q: %v", doc, err)
	}
	return obj
}

// decodeFile decodes every non-empty document of a multi-document YAML file.
func decodeFile(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objs []*unstructured.Unstructured
	for {
		obj := &unstructured.Unstructured{}
		if err := decoder.Decode(&obj.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return objs
			}
			t.Fatalf("%s: %v", path, err)
		}
		if len(obj.Object) > 0 {
			objs = append(objs, obj)
		}
	}
}

var notDNS = regexp.MustCompile(`[^a-z0-9]+`)

// uniqueName derives a DNS-1123 name from the test's name plus a random suffix.
func uniqueName(t *testing.T) string {
	name := strings.Trim(notDNS.ReplaceAllString(strings.ToLower(t.Name()), "-"), "-")
	if len(name) > 50 {
		name = strings.Trim(name[len(name)-50:], "-")
	}
	return name + "-" + utilrand.String(5)
}

// jsonEqual compares two JSON documents by value.
func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return reflect.DeepEqual(va, vb)
}
