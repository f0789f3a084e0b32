package crd_test

import (
	"slices"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/surveyor-dev/surveyor/config/crd"
	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// The owners' status lists are atomic: a keyed list's managedFields entry names every key
// and field in it, which made a Workload's managedFields 4.1 of its 8.8 KB, carried by
// every status write and watch event.
func TestOwnerStatusListsAreAtomic(t *testing.T) {
	for _, file := range []string{"bases/carto.run_workloads.yaml", "bases/carto.run_deliverables.yaml"} {
		b, err := crd.Bases.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var def apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(b, &def); err != nil {
			t.Fatal(err)
		}
		status := def.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"]
		resource := status.Properties["resources"].Items.Schema
		for path, list := range map[string]apiextensionsv1.JSONSchemaProps{
			"status.conditions":             status.Properties["conditions"],
			"status.resources":              status.Properties["resources"],
			"status.resources[].conditions": resource.Properties["conditions"],
			"status.resources[].outputs":    resource.Properties["outputs"],
			"status.resources[].inputs":     resource.Properties["inputs"],
		} {
			listType := ""
			if list.XListType != nil {
				listType = *list.XListType
			}
			if listType != "atomic" || len(list.XListMapKeys) > 0 {
				t.Errorf("%s %s: x-kubernetes-list-type %q, keys %v; want atomic, no keys", file, path, listType, list.XListMapKeys)
			}
		}
	}
}

// TestTableOfKindsMatchesTheCRDs: every kind of the table of kinds (pkg/apis) is served by
// a CRD under the table's plural, scope and names, so the CLI, the web view and the
// controller address each kind as the API server does.
func TestTableOfKindsMatchesTheCRDs(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	var kinds []*v1alpha1.KindInfo
	for _, k := range v1alpha1.OwnerKinds {
		kinds = append(kinds, &k.KindInfo, &k.Blueprint.KindInfo)
	}
	for _, k := range v1alpha1.TemplateKinds {
		kinds = append(kinds, &k.KindInfo)
	}
	kinds = append(kinds, v1alpha1.Runnables, v1alpha1.RunTemplates)
	for _, k := range kinds {
		b, err := crd.Bases.ReadFile("bases/carto.run_" + k.Resource + ".yaml")
		if err != nil {
			t.Errorf("%s: %v", k.Kind, err)
			continue
		}
		var def apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(b, &def); err != nil {
			t.Fatal(err)
		}
		n := def.Spec.Names
		if n.Kind != k.Kind || n.Plural != k.Resource || (def.Spec.Scope == apiextensionsv1.NamespaceScoped) != k.Namespaced {
			t.Errorf("%s: the CRD says kind %s, plural %s, scope %s", k.Kind, n.Kind, n.Plural, def.Spec.Scope)
		}
		for _, name := range append([]string{n.Singular, n.Plural}, n.ShortNames...) {
			if !slices.Contains(k.Names, name) {
				t.Errorf("%s: the table's names %v lack the CRD's %q", k.Kind, k.Names, name)
			}
		}
		if k.Singular() != n.Singular {
			t.Errorf("%s: singular %q, the CRD says %q", k.Kind, k.Singular(), n.Singular)
		}
		for obj, want := range map[runtime.Object]string{k.New(): k.Kind, k.NewList(): k.Kind + "List"} {
			if gvks, _, err := scheme.ObjectKinds(obj); err != nil || gvks[0].Kind != want {
				t.Errorf("%s: the table makes a %T (%v, %v), want a %s", k.Kind, obj, gvks, err, want)
			}
		}
	}
}
