package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FieldSelectorOperator is how a field selector compares the value at its key.
// +kubebuilder:validation:Enum=In;NotIn;Exists;DoesNotExist
type FieldSelectorOperator string

const (
	// FieldSelectorOpIn matches when the value's string form is one of values.
	FieldSelectorOpIn FieldSelectorOperator = "In"
	// FieldSelectorOpNotIn matches when the value's string form is none of values.
	FieldSelectorOpNotIn FieldSelectorOperator = "NotIn"
	// FieldSelectorOpExists matches when the key can be read.
	FieldSelectorOpExists FieldSelectorOperator = "Exists"
	// FieldSelectorOpDoesNotExist matches when the key cannot be read.
	FieldSelectorOpDoesNotExist FieldSelectorOperator = "DoesNotExist"
)

// FieldSelectorRequirement matches a value read with jsonpath from an object: the owner for a
// selector, the stamped object for a health rule.
//
// +kubebuilder:validation:XValidation:rule="!(self.operator in ['In', 'NotIn']) || (has(self.values) && size(self.values) > 0)",message="values must be set when operator is In or NotIn",fieldPath=".values"
// +kubebuilder:validation:XValidation:rule="!(self.operator in ['Exists', 'DoesNotExist']) || !has(self.values) || size(self.values) == 0",message="values must not be set when operator is Exists or DoesNotExist",fieldPath=".values"
type FieldSelectorRequirement struct {
	// Key is a jsonpath into the object, e.g. spec.source.git or .status.phase.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Key string `json:"key"`

	// Operator compares the value at key with values.
	// +required
	Operator FieldSelectorOperator `json:"operator"`

	// Values are compared with the value's string form. Required for In and NotIn, absent otherwise.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	Values []string `json:"values,omitempty"`
}

// Selector chooses owners by labels, label expressions and jsonpath fields. All given requirements
// must hold.
type Selector struct {
	// MatchLabels are labels the owner must carry with these values.
	// +optional
	MatchLabels map[string]string `json:"matchLabels,omitempty"`

	// MatchExpressions are label requirements on the owner.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	MatchExpressions []metav1.LabelSelectorRequirement `json:"matchExpressions,omitempty"`

	// MatchFields are jsonpath requirements on the owner, e.g. {key: spec.source.git, operator: Exists}.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	MatchFields []FieldSelectorRequirement `json:"matchFields,omitempty"`
}
