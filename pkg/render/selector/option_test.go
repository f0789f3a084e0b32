package selector_test

import (
	"errors"
	"testing"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/render/selector"
)

func option(name string, fields ...v1alpha1.FieldSelectorRequirement) v1alpha1.TemplateOption {
	return v1alpha1.TemplateOption{Name: name, Selector: v1alpha1.Selector{MatchFields: fields}}
}

func TestChooseOption(t *testing.T) {
	owner := workload(map[string]any{"team": "a"})
	gitSet := field("spec.source.git", v1alpha1.FieldSelectorOpExists)
	gitUnset := field("spec.source.git", v1alpha1.FieldSelectorOpDoesNotExist)
	imageSet := field("spec.image", v1alpha1.FieldSelectorOpExists)
	tests := []struct {
		name         string
		options      []v1alpha1.TemplateOption
		want         selector.Choice
		wantMatchErr string
		wantSelErr   string
	}{
		{
			name:    "the one matching template",
			options: []v1alpha1.TemplateOption{option("from-git", gitSet), option("from-image", gitUnset)},
			want:    selector.Choice{Template: "from-git"},
		},
		{
			name: "pass through",
			options: []v1alpha1.TemplateOption{
				option("build", imageSet),
				{PassThrough: "source", Selector: v1alpha1.Selector{MatchLabels: map[string]string{"team": "a"}}},
			},
			want: selector.Choice{PassThrough: "source"},
		},
		{
			name:         "none matches",
			options:      []v1alpha1.TemplateOption{option("a", imageSet), option("b", gitUnset)},
			wantMatchErr: "no option matched the workload among [a b]",
		},
		{
			name:         "an empty selector never matches",
			options:      []v1alpha1.TemplateOption{option("a")},
			wantMatchErr: "no option matched the workload among [a]",
		},
		{
			name: "several match",
			options: []v1alpha1.TemplateOption{
				option("a", gitSet), option("b", imageSet),
				{PassThrough: "source", Selector: v1alpha1.Selector{MatchFields: []v1alpha1.FieldSelectorRequirement{gitSet}}},
			},
			wantMatchErr: "expected exactly 1 option to match, found [a passThrough=source]",
		},
		{
			name: "the most specific match wins",
			options: []v1alpha1.TemplateOption{
				option("general", gitSet),
				{Name: "specific", Selector: v1alpha1.Selector{
					MatchLabels: map[string]string{"team": "a"},
					MatchFields: []v1alpha1.FieldSelectorRequirement{gitSet},
				}},
			},
			want: selector.Choice{Template: "specific"},
		},
		{
			name:       "invalid jsonpath names the option and key",
			options:    []v1alpha1.TemplateOption{option("a", gitSet), option("b", field("spec.[", v1alpha1.FieldSelectorOpExists))},
			wantSelErr: `option "b": matchFields[0].key "spec.[": unterminated array`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := selector.ChooseOption(v1alpha1.Workloads.Terms, owner, tt.options)
			var matchErr *selector.OptionsMatchError
			var selErr *selector.OptionSelectorError
			switch {
			case tt.wantMatchErr != "":
				if !errors.As(err, &matchErr) || err.Error() != tt.wantMatchErr {
					t.Fatalf("ChooseOption() error = %v, want *OptionsMatchError %q", err, tt.wantMatchErr)
				}
			case tt.wantSelErr != "":
				if !errors.As(err, &selErr) || err.Error() != tt.wantSelErr {
					t.Fatalf("ChooseOption() error = %v, want *OptionSelectorError %q", err, tt.wantSelErr)
				}
			default:
				if err != nil {
					t.Fatalf("ChooseOption() error = %v", err)
				}
				if got != tt.want {
					t.Errorf("ChooseOption() = %+v, want %+v", got, tt.want)
				}
			}
		})
	}
}
