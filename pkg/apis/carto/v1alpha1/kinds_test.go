package v1alpha1_test

import (
	"reflect"
	"testing"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

func TestGetOutputPaths(t *testing.T) {
	var source v1alpha1.ClusterSourceTemplate
	source.Spec.URLPath, source.Spec.RevisionPath = ".status.artifact.url", ".status.artifact.revision"
	var image v1alpha1.ClusterImageTemplate
	image.Spec.ImagePath = ".status.latestImage"
	var config v1alpha1.ClusterConfigTemplate
	config.Spec.ConfigPath = ".data"
	tests := []struct {
		name     string
		template v1alpha1.Template
		want     []v1alpha1.OutputPath
	}{
		{name: "source", template: &source, want: []v1alpha1.OutputPath{{Name: "url", Path: ".status.artifact.url"}, {Name: "revision", Path: ".status.artifact.revision"}}},
		{name: "image", template: &image, want: []v1alpha1.OutputPath{{Name: "image", Path: ".status.latestImage"}}},
		{name: "config", template: &config, want: []v1alpha1.OutputPath{{Name: "config", Path: ".data"}}},
		{name: "cluster template", template: &v1alpha1.ClusterTemplate{}, want: nil},
		{name: "deployment template", template: &v1alpha1.ClusterDeploymentTemplate{}, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.template.GetOutputPaths(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("GetOutputPaths() = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestTemplateKindOf: every template kind of the table is found by its own objects.
func TestTemplateKindOf(t *testing.T) {
	for _, k := range v1alpha1.TemplateKinds {
		if got := v1alpha1.TemplateKindOf(k.New()); got != k {
			t.Errorf("TemplateKindOf(%T) = %v, want %s", k.New(), got, k.Kind)
		}
	}
}
