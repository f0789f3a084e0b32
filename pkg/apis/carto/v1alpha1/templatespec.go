package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TemplateSpec is what every template kind shares: the object to stamp, the params it accepts and the
// rules that judge the stamped object. Each kind inlines it into its spec.
//
// +kubebuilder:validation:XValidation:rule="!(has(self.healthyConditionRule) && has(self.healthRule))",message="set healthyConditionRule or healthRule, not both",fieldPath=".healthyConditionRule"
// +kubebuilder:validation:XValidation:rule="has(self.template) || (has(self.ytt) && size(self.ytt) > 0)",message="invalid template: must specify one of template or ytt, found neither"
// +kubebuilder:validation:XValidation:rule="!has(self.template) || !has(self.ytt) || size(self.ytt) == 0",message="invalid template: must specify one of template or ytt, found both"
// +kubebuilder:validation:XValidation:rule="!has(self.retentionPolicy) || (has(self.lifecycle) && self.lifecycle != 'mutable') || has(self.healthRule)",message="retentionPolicy requires lifecycle immutable or tekton",fieldPath=".retentionPolicy"
type TemplateSpec struct {
	// Template is the Kubernetes object to stamp, with $(...)$ tags. Its namespace is always the owner's.
	// Set exactly one of template and ytt.
	// +optional
	Template *TemplateObject `json:"template,omitempty"`

	// Ytt is a ytt template whose first YAML document is the object to stamp (DESIGN §11). Each key
	// of the templating context is one data value: data.values.workload, .params, .sources, .labels
	// and so on. Its output is not $(...)$-interpolated. Set exactly one of template and ytt.
	// +optional
	// +kubebuilder:validation:MaxLength=1048576
	Ytt string `json:"ytt,omitempty"`

	// Params are the params the template accepts, with their defaults. Supply chains, resources and
	// owners override the defaults (DESIGN §3.2).
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=128
	Params []TemplateParam `json:"params,omitempty"`

	// HealthyConditionRule says when the stamped object is healthy. Without one, an object with its
	// outputs present is healthy.
	// +optional
	HealthyConditionRule *HealthRule `json:"healthyConditionRule,omitempty"`

	// HealthRule is Cartographer's name for HealthyConditionRule. It is accepted so Cartographer
	// templates apply unchanged; set one or the other, not both.
	// +optional
	HealthRule *HealthRule `json:"healthRule,omitempty"`

	// ConditionRules derive further conditions of the stamped object, e.g. Complete (DESIGN §5).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	ConditionRules []ConditionRule `json:"conditionRules,omitempty"`

	// Lifecycle says whether the stamped object is updated in place (mutable, the default) or
	// replaced by a new object, named through metadata.generateName, whenever the stamped content
	// changes (immutable). tekton is immutable with the default health rule
	// singleConditionType: Succeeded.
	// +optional
	// +kubebuilder:validation:Enum=mutable;immutable;tekton
	Lifecycle Lifecycle `json:"lifecycle,omitempty"`

	// RetentionPolicy bounds how many old objects of an immutable template are kept. A mutable
	// template may not set it, except next to healthRule: Cartographer v0.8.11 accepts that pair,
	// since its webhook returns the health rule's verdict before it looks at the retentionPolicy,
	// so Cartographer's templates keep applying. The policy of a mutable template is ignored.
	// +optional
	RetentionPolicy *RetentionPolicy `json:"retentionPolicy,omitempty"`
}

// Lifecycle is how a template's stamped object follows changes.
type Lifecycle string

const (
	// LifecycleMutable updates one object in place.
	LifecycleMutable Lifecycle = "mutable"
	// LifecycleImmutable creates a new object for every change and never updates an old one.
	LifecycleImmutable Lifecycle = "immutable"
	// LifecycleTekton is LifecycleImmutable with the default rule singleConditionType: Succeeded.
	LifecycleTekton Lifecycle = "tekton"
)

// LifecycleLabel is the value of the carto.run/template-lifecycle label on the stamped object,
// as Cartographer sets it: an unset or unknown lifecycle is mutable.
func (s *TemplateSpec) LifecycleLabel() string {
	if s.Lifecycle == LifecycleImmutable || s.Lifecycle == LifecycleTekton {
		return string(s.Lifecycle)
	}
	return string(LifecycleMutable)
}

// IsImmutable says whether the template stamps a new object per change.
func (s *TemplateSpec) IsImmutable() bool {
	return s.Lifecycle == LifecycleImmutable || s.Lifecycle == LifecycleTekton
}

// RetentionPolicy is how many finished objects of an immutable template are kept; the oldest beyond
// these counts are deleted. An object whose health is True counts as a successful run, False as a
// failed one; one still running counts as neither.
type RetentionPolicy struct {
	// MaxFailedRuns is how many failed objects are kept.
	// +required
	// +kubebuilder:validation:Minimum=1
	MaxFailedRuns int64 `json:"maxFailedRuns"`

	// MaxSuccessfulRuns is how many successful objects are kept.
	// +required
	// +kubebuilder:validation:Minimum=1
	MaxSuccessfulRuns int64 `json:"maxSuccessfulRuns"`
}

// DefaultRetention is the retention of an immutable template without a retentionPolicy.
var DefaultRetention = RetentionPolicy{MaxFailedRuns: 10, MaxSuccessfulRuns: 10}

// EffectiveHealthRule returns the template's health rule, whichever of healthyConditionRule and
// healthRule spells it; without either, singleConditionType: Succeeded for lifecycle tekton, else
// nil. healthyConditionRule wins if, against the CRD's validation, both are set.
func (s *TemplateSpec) EffectiveHealthRule() *HealthRule {
	switch {
	case s.HealthyConditionRule != nil:
		return s.HealthyConditionRule
	case s.HealthRule != nil:
		return s.HealthRule
	case s.Lifecycle == LifecycleTekton:
		return &HealthRule{SingleConditionType: "Succeeded"}
	}
	return nil
}

// TemplateParam is a param a template accepts and the value it has when nobody overrides it.
type TemplateParam struct {
	// Name is the param's name, used as $(params.<name>)$.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Default is the param's value unless a supply chain, resource or owner overrides it. Any JSON value.
	// +required
	Default apiextensionsv1.JSON `json:"default"`
}

// TemplateStatus is the status of every template kind: whether its rules are valid.
type TemplateStatus struct {
	// ObservedGeneration is the generation of the spec this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions hold Ready, which is False with reason InvalidHealthRule or InvalidConditionRule and a
	// message naming the bad path or expression when a rule cannot be used.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}
