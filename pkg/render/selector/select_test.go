package selector_test

import (
	"errors"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/render/selector"
)

func byLabels(name string, labels map[string]string) selector.Candidate {
	return selector.Candidate{Name: name, Selector: v1alpha1.OwnerSelector{Selector: labels}}
}

func TestSelect(t *testing.T) {
	web := workload(map[string]any{"app.tanzu.vmware.com/workload-type": "web", "team": "a"})
	gitExists := v1alpha1.OwnerSelector{
		Selector:            map[string]string{"app.tanzu.vmware.com/workload-type": "web"},
		SelectorMatchFields: []v1alpha1.FieldSelectorRequirement{field("spec.source.git", v1alpha1.FieldSelectorOpExists)},
	}
	tests := []struct {
		name       string
		terms      v1alpha1.SelectionTerms
		owner      selector.Owner
		candidates []selector.Candidate
		want       selector.Selection
		wantErrs   []string
	}{
		{
			name:       "owner without labels",
			terms:      v1alpha1.Workloads.Terms,
			owner:      workload(nil),
			candidates: []selector.Candidate{{Name: "fields-only", Selector: gitExists}},
			want:       selector.Selection{Reason: v1alpha1.ReasonWorkloadLabelsMissing, Message: "workload has no labels to match to supply chain"},
		},
		{
			name:       "no candidate matches",
			terms:      v1alpha1.Workloads.Terms,
			owner:      web,
			candidates: []selector.Candidate{byLabels("api", map[string]string{"app.tanzu.vmware.com/workload-type": "api"}), {Name: "empty"}},
			want: selector.Selection{
				Reason:  v1alpha1.ReasonSupplyChainNotFound,
				Message: "no supply chain found where full selector is satisfied by labels: map[app.tanzu.vmware.com/workload-type:web team:a]",
			},
		},
		{
			name:       "no candidates at all",
			terms:      v1alpha1.Workloads.Terms,
			owner:      web,
			candidates: nil,
			want: selector.Selection{
				Reason:  v1alpha1.ReasonSupplyChainNotFound,
				Message: "no supply chain found where full selector is satisfied by labels: map[app.tanzu.vmware.com/workload-type:web team:a]",
			},
		},
		{
			name:       "one match",
			terms:      v1alpha1.Workloads.Terms,
			owner:      web,
			candidates: []selector.Candidate{byLabels("api", map[string]string{"app.tanzu.vmware.com/workload-type": "api"}), byLabels("web", map[string]string{"app.tanzu.vmware.com/workload-type": "web"})},
			want:       selector.Selection{Name: "web", Reason: v1alpha1.ReasonReady},
		},
		{
			name:  "the most specific selector wins",
			terms: v1alpha1.Workloads.Terms,
			owner: web,
			candidates: []selector.Candidate{
				byLabels("web", map[string]string{"app.tanzu.vmware.com/workload-type": "web"}),
				{Name: "web-git", Selector: gitExists},
				{Name: "web-team", Selector: v1alpha1.OwnerSelector{
					Selector:                 map[string]string{"app.tanzu.vmware.com/workload-type": "web"},
					SelectorMatchExpressions: []metav1.LabelSelectorRequirement{expr("team", metav1.LabelSelectorOpIn, "a")},
					SelectorMatchFields:      []v1alpha1.FieldSelectorRequirement{field("spec.source.git", v1alpha1.FieldSelectorOpExists)},
				}},
			},
			want: selector.Selection{Name: "web-team", Reason: v1alpha1.ReasonReady},
		},
		{
			name:  "a partial match with more requirements does not win",
			terms: v1alpha1.Workloads.Terms,
			owner: web,
			candidates: []selector.Candidate{
				byLabels("web", map[string]string{"app.tanzu.vmware.com/workload-type": "web"}),
				byLabels("web-b", map[string]string{"app.tanzu.vmware.com/workload-type": "web", "team": "b", "x": "y"}),
			},
			want: selector.Selection{Name: "web", Reason: v1alpha1.ReasonReady},
		},
		{
			name:  "tie at the top score",
			terms: v1alpha1.Workloads.Terms,
			owner: web,
			candidates: []selector.Candidate{
				byLabels("zeta", map[string]string{"team": "a"}),
				byLabels("alpha", map[string]string{"app.tanzu.vmware.com/workload-type": "web"}),
				byLabels("low", map[string]string{}),
			},
			want: selector.Selection{
				Reason:  v1alpha1.ReasonMultipleSupplyChainMatches,
				Message: "workload may only match a single supply chain's selector",
			},
		},
		{
			name:  "a tie below the top score does not matter",
			terms: v1alpha1.Workloads.Terms,
			owner: web,
			candidates: []selector.Candidate{
				byLabels("type", map[string]string{"app.tanzu.vmware.com/workload-type": "web"}),
				byLabels("team", map[string]string{"team": "a"}),
				{Name: "both", Selector: gitExists},
			},
			want: selector.Selection{Name: "both", Reason: v1alpha1.ReasonReady},
		},
		{
			name:  "a broken candidate is skipped and reported",
			terms: v1alpha1.Workloads.Terms,
			owner: web,
			candidates: []selector.Candidate{
				{Name: "broken", Selector: v1alpha1.OwnerSelector{
					Selector:            map[string]string{"app.tanzu.vmware.com/workload-type": "web"},
					SelectorMatchFields: []v1alpha1.FieldSelectorRequirement{field("spec.[", v1alpha1.FieldSelectorOpExists)},
				}},
				byLabels("web", map[string]string{"app.tanzu.vmware.com/workload-type": "web"}),
			},
			want:     selector.Selection{Name: "web", Reason: v1alpha1.ReasonReady},
			wantErrs: []string{`"broken": selectorMatchFields[0].key "spec.[": unterminated array`},
		},
		{
			name:  "deliverable wording",
			terms: v1alpha1.Deliverables.Terms,
			owner: web,
			candidates: []selector.Candidate{
				byLabels("b", map[string]string{"team": "a"}),
				byLabels("a", map[string]string{"team": "a"}),
			},
			want: selector.Selection{
				Reason:  v1alpha1.ReasonMultipleDeliveryMatches,
				Message: "deliverable may only match a single delivery's selector",
			},
		},
		{
			name:  "deliverable without labels",
			terms: v1alpha1.Deliverables.Terms,
			owner: workload(map[string]any{}),
			want:  selector.Selection{Reason: v1alpha1.ReasonDeliverableLabelsMissing, Message: "deliverable has no labels to match to delivery"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := selector.Select(tt.terms, tt.owner, tt.candidates)
			var gotErrs []string
			for _, err := range got.Errors {
				var ce *selector.CandidateError
				if !errors.As(err, &ce) {
					t.Errorf("error %v is not a *CandidateError", err)
				}
				gotErrs = append(gotErrs, err.Error())
			}
			if !slices.Equal(gotErrs, tt.wantErrs) {
				t.Errorf("Select() errors = %q, want %q", gotErrs, tt.wantErrs)
			}
			got.Errors = nil
			if got.Name != tt.want.Name || got.Reason != tt.want.Reason || got.Message != tt.want.Message {
				t.Errorf("Select() = %+v, want %+v", got, tt.want)
			}
		})
	}
}
