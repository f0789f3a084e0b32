package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// HealthRule says when a stamped object is healthy. Exactly one of its three forms is set. It is
// spelled healthyConditionRule in Surveyor and healthRule in Cartographer; both mean this type.
//
// +kubebuilder:validation:XValidation:rule="[has(self.alwaysHealthy), has(self.singleConditionType), has(self.multiMatch)].filter(x, x).size() == 1",message="exactly one of alwaysHealthy, singleConditionType or multiMatch must be set"
type HealthRule struct {
	// AlwaysHealthy, written `alwaysHealthy: {}`, makes the object healthy as soon as it exists.
	// +optional
	AlwaysHealthy *AlwaysHealthyRule `json:"alwaysHealthy,omitempty"`

	// SingleConditionType names a condition of the object whose True or False status is copied.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=316
	SingleConditionType string `json:"singleConditionType,omitempty"`

	// MultiMatch decides health from several matchers: any unhealthy matcher makes the object
	// unhealthy, and all healthy matchers together make it healthy.
	// +optional
	MultiMatch *MultiMatchRule `json:"multiMatch,omitempty"`
}

// AlwaysHealthyRule is the empty object of `alwaysHealthy: {}`.
type AlwaysHealthyRule struct{}

// MultiMatchRule holds the two sides of a multiMatch health rule. Both are required and non-empty.
type MultiMatchRule struct {
	// Healthy holds the matchers that must all hold for the object to be healthy.
	// +required
	Healthy MatchRule `json:"healthy"`

	// Unhealthy holds the matchers of which any one makes the object unhealthy. It is checked first.
	// +required
	Unhealthy MatchRule `json:"unhealthy"`
}

// MatchRule is one side of a multiMatch rule: conditions, jsonpath fields and CEL expressions on the
// stamped object.
//
// +kubebuilder:validation:XValidation:rule="(has(self.matchConditions) && size(self.matchConditions) > 0) || (has(self.matchFields) && size(self.matchFields) > 0) || (has(self.matchCEL) && size(self.matchCEL) > 0)",message="must set at least one of matchConditions, matchFields or matchCEL"
type MatchRule struct {
	// MatchConditions match conditions of the object's status.conditions by type and status.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	MatchConditions []ConditionRequirement `json:"matchConditions,omitempty"`

	// MatchFields match values read from the object with jsonpath.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	MatchFields []HealthMatchFieldSelectorRequirement `json:"matchFields,omitempty"`

	// MatchCEL match CEL expressions evaluated with the variable `object` bound to the object.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	MatchCEL []CELMatch `json:"matchCEL,omitempty"`
}

// ConditionRequirement matches a condition of the object by type and status.
type ConditionRequirement struct {
	// Type is the condition type, e.g. Ready.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=316
	Type string `json:"type"`

	// Status is the condition status that matches: True, False or Unknown.
	// +required
	// +kubebuilder:validation:Enum=True;False;Unknown
	Status metav1.ConditionStatus `json:"status"`
}

// HealthMatchFieldSelectorRequirement matches a value read from the stamped object with jsonpath and
// says where to find the message to report when it matches.
type HealthMatchFieldSelectorRequirement struct {
	FieldSelectorRequirement `json:",inline"`

	// MessagePath is a jsonpath into the object whose value becomes the condition message on a match.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	MessagePath string `json:"messagePath,omitempty"`
}

// CELMatch matches when a CEL expression over `object` evaluates to true.
type CELMatch struct {
	// Expression is a CEL expression that must evaluate to a bool. The variable `object` is the stamped object.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	Expression string `json:"expression"`

	// MessageExpression is an optional CEL expression evaluating to the string reported on a match.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	MessageExpression string `json:"messageExpression,omitempty"`
}
