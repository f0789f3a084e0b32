package crd_test

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/surveyor-dev/surveyor/config/crd"
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
