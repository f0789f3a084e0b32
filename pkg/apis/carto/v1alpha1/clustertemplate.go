package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClusterTemplate is a cluster-scoped template without outputs: it stamps an object, typically the
// last one of a supply chain (a Deployment, a Job), whose health or completion is all that is read.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=ct,categories=carto
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=`.status.conditions[?(@.type=='Ready')].status`
// +kubebuilder:printcolumn:name="REASON",type=string,JSONPath=`.status.conditions[?(@.type=='Ready')].reason`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type ClusterTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the template.
	// +required
	Spec TemplateSpec `json:"spec"`

	// Status reports whether the template's rules are valid.
	// +optional
	Status TemplateStatus `json:"status,omitempty"`
}

// ClusterTemplateList is a list of ClusterTemplate.
//
// +kubebuilder:object:root=true
type ClusterTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the ClusterTemplates.
	Items []ClusterTemplate `json:"items"`
}
