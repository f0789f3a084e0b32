package v1alpha1

import (
	"encoding/json"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// A BlueprintRevision's name and hash are the SHA-256 of the blueprint's spec as encoding/json
// writes it from these types, and a stored revision is trusted only while its content hashes the
// same again (pkg/realizer, trustedContent). encoding/json writes fields in declaration order,
// an embedded struct's where it is embedded, so moving a field, or sharing some of them between
// the two blueprint kinds through an embedded struct (a supply-chain resource's images and a
// delivery resource's deployment sit between sources and configs), would rename every revision
// and make the stored ones untrusted. These are the encodings today; they must not change.
func TestBlueprintSpecEncodingIsStable(t *testing.T) {
	value := &apiextensionsv1.JSON{Raw: []byte(`1`)}
	selector := OwnerSelector{
		Selector:                 map[string]string{"l": "v"},
		SelectorMatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: metav1.LabelSelectorOpExists}},
		SelectorMatchFields:      []FieldSelectorRequirement{{Key: "spec.x", Operator: FieldSelectorOpExists}},
	}
	params := []BlueprintParam{{Name: "p", Value: value, Default: value}}
	refs := []ResourceReference{{Name: "n", Resource: "r"}}
	// Both kinds' specs encode the same up to their one resource's sources.
	const specUpToSources = `{"selector":{"l":"v"},"selectorMatchExpressions":[{"key":"k","operator":"Exists"}],"selectorMatchFields":[{"key":"spec.x","operator":"Exists"}],` +
		`"params":[{"name":"p","value":1,"default":1}],"serviceAccountRef":{"name":"sa","namespace":"ns"},"rolloutStrategy":{"type":"All"},` +
		`"resources":[{"name":"r","templateRef":{"kind":"ClusterTemplate","name":"t","options":[{"name":"o","selector":{},"passThrough":"s"}]},` +
		`"params":[{"name":"p","value":1,"default":1}],"sources":[{"name":"n","resource":"r"}],`
	tests := []struct {
		name string
		spec any
		want string
	}{
		{
			name: "ClusterSupplyChainSpec",
			spec: ClusterSupplyChainSpec{
				OwnerSelector:     selector,
				Params:            params,
				ServiceAccountRef: &ServiceAccountRef{Name: "sa", Namespace: "ns"},
				RolloutStrategy:   &RolloutStrategy{Type: RolloutAll},
				Resources: []SupplyChainResource{{
					Name:        "r",
					TemplateRef: SupplyChainTemplateReference{Kind: "ClusterTemplate", Name: "t", Options: []TemplateOption{{Name: "o", PassThrough: "s"}}},
					Params:      params,
					Sources:     refs,
					Images:      refs,
					Configs:     refs,
				}},
			},
			want: specUpToSources + `"images":[{"name":"n","resource":"r"}],"configs":[{"name":"n","resource":"r"}]}]}`,
		},
		{
			name: "ClusterDeliverySpec",
			spec: ClusterDeliverySpec{
				OwnerSelector:     selector,
				Params:            params,
				ServiceAccountRef: &ServiceAccountRef{Name: "sa", Namespace: "ns"},
				RolloutStrategy:   &RolloutStrategy{Type: RolloutAll},
				Resources: []DeliveryResource{{
					Name:        "r",
					TemplateRef: DeliveryTemplateReference{Kind: "ClusterTemplate", Name: "t", Options: []TemplateOption{{Name: "o", PassThrough: "s"}}},
					Params:      params,
					Sources:     refs,
					Deployment:  &DeploymentReference{Resource: "r", Name: "n"},
					Configs:     refs,
				}},
			},
			want: specUpToSources + `"deployment":{"resource":"r","name":"n"},"configs":[{"name":"n","resource":"r"}]}]}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(tt.spec)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("encoding changed, which renames every BlueprintRevision:\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

// A revision also holds each template's spec as the unstructured converter writes it, hashed
// the same way; a template without ytt must encode as it did before ytt existed, and one
// without template must not write "template": null.
func TestTemplateSpecEncodingIsStable(t *testing.T) {
	tests := []struct {
		name string
		spec TemplateSpec
		want string
	}{
		{
			name: "template",
			spec: TemplateSpec{
				Template:  &TemplateObject{Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap"}`)},
				Params:    []TemplateParam{{Name: "p", Default: apiextensionsv1.JSON{Raw: []byte(`"5"`)}}},
				Lifecycle: LifecycleMutable,
			},
			want: `{"lifecycle":"mutable","params":[{"default":"5","name":"p"}],"template":{"apiVersion":"v1","kind":"ConfigMap"}}`,
		},
		{
			name: "ytt",
			spec: TemplateSpec{Ytt: "kind: ConfigMap\n"},
			want: `{"ytt":"kind: ConfigMap\n"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tpl := &ClusterTemplate{Spec: tt.spec}
			u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(tpl)
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(u["spec"])
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("encoding changed, which renames every BlueprintRevision:\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}
