package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClusterDeploymentTemplate is a cluster-scoped template for deliveries. Its stamped object deploys a
// source and says, through observedMatches or observedCompletion, when the deployment has finished.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=cdt,categories=carto
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=`.status.conditions[?(@.type=='Ready')].status`
// +kubebuilder:printcolumn:name="REASON",type=string,JSONPath=`.status.conditions[?(@.type=='Ready')].reason`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type ClusterDeploymentTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the template.
	// +required
	Spec ClusterDeploymentTemplateSpec `json:"spec"`

	// Status reports whether the template's rules are valid.
	// +optional
	Status TemplateStatus `json:"status,omitempty"`
}

// ClusterDeploymentTemplateList is a list of ClusterDeploymentTemplate.
//
// +kubebuilder:object:root=true
type ClusterDeploymentTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the ClusterDeploymentTemplates.
	Items []ClusterDeploymentTemplate `json:"items"`
}

// ClusterDeploymentTemplateSpec is the spec of a ClusterDeploymentTemplate. Exactly one of
// observedMatches and observedCompletion is set.
//
// +kubebuilder:validation:XValidation:rule="has(self.observedMatches) != has(self.observedCompletion)",message="exactly one of observedMatches or observedCompletion must be set"
type ClusterDeploymentTemplateSpec struct {
	TemplateSpec `json:",inline"`

	// ObservedMatches finish the deployment when, for every pair, the value at output equals the value
	// at input in the stamped object.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	ObservedMatches []ObservedMatch `json:"observedMatches,omitempty"`

	// ObservedCompletion finishes the deployment when a field of the stamped object holds a value.
	// +optional
	ObservedCompletion *ObservedCompletion `json:"observedCompletion,omitempty"`
}

// ObservedMatch pairs a field the deployment was given with the field where it reports what it did.
type ObservedMatch struct {
	// Input is the jsonpath of a field set from the template's inputs, e.g. spec.value.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Input string `json:"input"`

	// Output is the jsonpath of the field that must come to equal input, e.g. status.value.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Output string `json:"output"`
}

// ObservedCompletion tells success and failure of a deployment apart by fields of the stamped object.
type ObservedCompletion struct {
	// Succeeded is the field value that means the deployment succeeded.
	// +required
	Succeeded CompletionCondition `json:"succeeded"`

	// Failed is the field value that means the deployment failed.
	// +optional
	Failed *CompletionCondition `json:"failed,omitempty"`
}

// CompletionCondition is a jsonpath and the value it must hold.
type CompletionCondition struct {
	// Key is a jsonpath into the stamped object, e.g. status.conditions[?(@.type=="Succeeded")].status.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Key string `json:"key"`

	// Value is the value the key must hold, compared as a string.
	// +required
	Value string `json:"value"`
}
