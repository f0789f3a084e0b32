package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TemplateSpec is what every template kind shares: the object to stamp, the params it accepts and the
// rules that judge the stamped object. Each kind inlines it into its spec.
//
// +kubebuilder:validation:XValidation:rule="!(has(self.healthyConditionRule) && has(self.healthRule))",message="set healthyConditionRule or healthRule, not both",fieldPath=".healthyConditionRule"
type TemplateSpec struct {
	// Template is the Kubernetes object to stamp, with $(...)$ tags. Its namespace is always the owner's.
	// +required
	Template TemplateObject `json:"template"`

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
}

// EffectiveHealthRule returns the template's health rule, whichever of healthyConditionRule and
// healthRule spells it, or nil when there is none. healthyConditionRule wins if, against the CRD's
// validation, both are set.
func (s *TemplateSpec) EffectiveHealthRule() *HealthRule {
	if s.HealthyConditionRule != nil {
		return s.HealthyConditionRule
	}
	return s.HealthRule
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
