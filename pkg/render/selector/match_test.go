package selector_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/render/selector"
)

func workload(labels map[string]any) selector.Owner {
	obj := map[string]any{
		"apiVersion": "carto.run/v1alpha1",
		"kind":       "Workload",
		"metadata":   map[string]any{"name": "petclinic", "namespace": "dev"},
		"spec": map[string]any{
			"source":  map[string]any{"git": map[string]any{"url": "https://example.com/petclinic.git"}},
			"image":   nil,
			"params":  []any{map[string]any{"name": "replicas", "value": int64(2)}},
			"enabled": true,
		},
	}
	if labels != nil {
		obj["metadata"].(map[string]any)["labels"] = labels
	}
	return selector.NewOwner(obj)
}

func field(key string, op v1alpha1.FieldSelectorOperator, values ...string) v1alpha1.FieldSelectorRequirement {
	return v1alpha1.FieldSelectorRequirement{Key: key, Operator: op, Values: values}
}

func expr(key string, op metav1.LabelSelectorOperator, values ...string) metav1.LabelSelectorRequirement {
	return metav1.LabelSelectorRequirement{Key: key, Operator: op, Values: values}
}

func TestMatchBlueprint(t *testing.T) {
	web := workload(map[string]any{"app.tanzu.vmware.com/workload-type": "web", "team": "a"})
	tests := []struct {
		name    string
		sel     v1alpha1.OwnerSelector
		owner   selector.Owner
		want    selector.Match
		wantErr string
	}{
		{name: "empty selector never matches", owner: web, want: selector.Match{}},
		{
			name:  "all labels match",
			sel:   v1alpha1.OwnerSelector{Selector: map[string]string{"app.tanzu.vmware.com/workload-type": "web", "team": "a"}},
			owner: web,
			want:  selector.Match{Matched: true, Score: 2},
		},
		{
			name:  "one label differs",
			sel:   v1alpha1.OwnerSelector{Selector: map[string]string{"app.tanzu.vmware.com/workload-type": "web", "team": "b"}},
			owner: web,
			want:  selector.Match{Score: 1},
		},
		{
			name:  "empty label value needs the label",
			sel:   v1alpha1.OwnerSelector{Selector: map[string]string{"absent": ""}},
			owner: web,
			want:  selector.Match{},
		},
		{
			name: "expressions",
			sel: v1alpha1.OwnerSelector{SelectorMatchExpressions: []metav1.LabelSelectorRequirement{
				expr("team", metav1.LabelSelectorOpIn, "a", "b"),
				expr("absent", metav1.LabelSelectorOpNotIn, "x"),
				expr("team", metav1.LabelSelectorOpExists),
				expr("absent", metav1.LabelSelectorOpDoesNotExist),
			}},
			owner: web,
			want:  selector.Match{Matched: true, Score: 4},
		},
		{
			name: "expression fails",
			sel: v1alpha1.OwnerSelector{SelectorMatchExpressions: []metav1.LabelSelectorRequirement{
				expr("team", metav1.LabelSelectorOpIn, "b"),
			}},
			owner: web,
			want:  selector.Match{},
		},
		{
			name: "fields",
			sel: v1alpha1.OwnerSelector{SelectorMatchFields: []v1alpha1.FieldSelectorRequirement{
				field("spec.source.git", v1alpha1.FieldSelectorOpExists),
				field(".spec.source.image", v1alpha1.FieldSelectorOpDoesNotExist),
				field("{.spec.source.git.url}", v1alpha1.FieldSelectorOpIn, "https://example.com/petclinic.git"),
				field("spec.params[?(@.name=='replicas')].value", v1alpha1.FieldSelectorOpIn, "2"),
				field("spec.enabled", v1alpha1.FieldSelectorOpIn, "true"),
				field("metadata.name", v1alpha1.FieldSelectorOpNotIn, "other"),
				field("metadata.labels['app.tanzu.vmware.com/workload-type']", v1alpha1.FieldSelectorOpIn, "web"),
			}},
			owner: web,
			want:  selector.Match{Matched: true, Score: 7},
		},
		{
			name: "null counts as missing",
			sel: v1alpha1.OwnerSelector{SelectorMatchFields: []v1alpha1.FieldSelectorRequirement{
				field("spec.image", v1alpha1.FieldSelectorOpExists),
				field("spec.image", v1alpha1.FieldSelectorOpDoesNotExist),
			}},
			owner: web,
			want:  selector.Match{Score: 1},
		},
		{
			name: "a missing field matches neither In nor NotIn",
			sel: v1alpha1.OwnerSelector{SelectorMatchFields: []v1alpha1.FieldSelectorRequirement{
				field("spec.build.env", v1alpha1.FieldSelectorOpIn, "x"),
				field("spec.build.env", v1alpha1.FieldSelectorOpNotIn, "x"),
			}},
			owner: web,
			want:  selector.Match{},
		},
		{
			name: "labels, expressions and fields add up",
			sel: v1alpha1.OwnerSelector{
				Selector:                 map[string]string{"team": "a"},
				SelectorMatchExpressions: []metav1.LabelSelectorRequirement{expr("team", metav1.LabelSelectorOpExists)},
				SelectorMatchFields:      []v1alpha1.FieldSelectorRequirement{field("spec.source.git", v1alpha1.FieldSelectorOpExists)},
			},
			owner: web,
			want:  selector.Match{Matched: true, Score: 3},
		},
		{
			name: "fields match an owner without labels",
			sel: v1alpha1.OwnerSelector{SelectorMatchFields: []v1alpha1.FieldSelectorRequirement{
				field("spec.source.git", v1alpha1.FieldSelectorOpExists),
			}},
			owner: workload(nil),
			want:  selector.Match{Matched: true, Score: 1},
		},
		{
			name: "invalid jsonpath names the field",
			sel: v1alpha1.OwnerSelector{SelectorMatchFields: []v1alpha1.FieldSelectorRequirement{
				field("spec.source.git", v1alpha1.FieldSelectorOpExists),
				field("spec.[", v1alpha1.FieldSelectorOpExists),
			}},
			owner:   web,
			wantErr: `selectorMatchFields[1].key "spec.[": unterminated array`,
		},
		{
			name: "unknown operator names the field",
			sel: v1alpha1.OwnerSelector{SelectorMatchFields: []v1alpha1.FieldSelectorRequirement{
				field("spec.source.git", "Like"),
			}},
			owner:   web,
			wantErr: `selectorMatchFields[0].operator "Like": must be one of In, NotIn, Exists, DoesNotExist`,
		},
		{
			name: "invalid label requirement names the field",
			sel: v1alpha1.OwnerSelector{SelectorMatchExpressions: []metav1.LabelSelectorRequirement{
				expr("team", metav1.LabelSelectorOpIn),
			}},
			owner:   web,
			wantErr: `selectorMatchExpressions[0]: values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := selector.MatchBlueprint(tt.sel, tt.owner)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("MatchBlueprint() error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("MatchBlueprint() error = %v", err)
			}
			if got != tt.want {
				t.Errorf("MatchBlueprint() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestMatchOption(t *testing.T) {
	web := workload(map[string]any{"team": "a"})
	tests := []struct {
		name    string
		sel     v1alpha1.Selector
		want    selector.Match
		wantErr string
	}{
		{name: "empty never matches", want: selector.Match{}},
		{
			name: "all three parts",
			sel: v1alpha1.Selector{
				MatchLabels:      map[string]string{"team": "a"},
				MatchExpressions: []metav1.LabelSelectorRequirement{expr("team", metav1.LabelSelectorOpNotIn, "b")},
				MatchFields:      []v1alpha1.FieldSelectorRequirement{field("spec.source.git", v1alpha1.FieldSelectorOpExists)},
			},
			want: selector.Match{Matched: true, Score: 3},
		},
		{
			name:    "errors use the option's field names",
			sel:     v1alpha1.Selector{MatchFields: []v1alpha1.FieldSelectorRequirement{field("spec.[", v1alpha1.FieldSelectorOpExists)}},
			wantErr: `matchFields[0].key "spec.[": unterminated array`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := selector.MatchOption(tt.sel, web)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("MatchOption() error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("MatchOption() error = %v", err)
			}
			if got != tt.want {
				t.Errorf("MatchOption() = %+v, want %+v", got, tt.want)
			}
		})
	}
}
