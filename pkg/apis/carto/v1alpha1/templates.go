package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The template kinds with outputs. Each inlines TemplateSpec, whose validations controller-gen carries
// into the spec's schema, and adds the jsonpaths of its outputs.

// ClusterSourceTemplate is a cluster-scoped template whose stamped object provides a source: a URL and
// a revision, read from the stamped object with urlPath and revisionPath, e.g. a Flux GitRepository.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=cst,categories=carto
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=`.status.conditions[?(@.type=='Ready')].status`
// +kubebuilder:printcolumn:name="REASON",type=string,JSONPath=`.status.conditions[?(@.type=='Ready')].reason`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type ClusterSourceTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the template.
	// +required
	Spec ClusterSourceTemplateSpec `json:"spec"`

	// Status reports whether the template's rules are valid.
	// +optional
	Status TemplateStatus `json:"status,omitempty"`
}

// ClusterSourceTemplateList is a list of ClusterSourceTemplate.
//
// +kubebuilder:object:root=true
type ClusterSourceTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the ClusterSourceTemplates.
	Items []ClusterSourceTemplate `json:"items"`
}

// ClusterSourceTemplateSpec is the spec of a ClusterSourceTemplate.
type ClusterSourceTemplateSpec struct {
	TemplateSpec `json:",inline"`

	// URLPath is the jsonpath of the source URL in the stamped object, e.g. .status.artifact.url.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	URLPath string `json:"urlPath"`

	// RevisionPath is the jsonpath of the source revision in the stamped object, e.g. .status.artifact.revision.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	RevisionPath string `json:"revisionPath"`
}

// ClusterImageTemplate is a cluster-scoped template whose stamped object provides an image, read from
// the stamped object with imagePath, e.g. a kpack Image.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=cit,categories=carto
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=`.status.conditions[?(@.type=='Ready')].status`
// +kubebuilder:printcolumn:name="REASON",type=string,JSONPath=`.status.conditions[?(@.type=='Ready')].reason`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type ClusterImageTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the template.
	// +required
	Spec ClusterImageTemplateSpec `json:"spec"`

	// Status reports whether the template's rules are valid.
	// +optional
	Status TemplateStatus `json:"status,omitempty"`
}

// ClusterImageTemplateList is a list of ClusterImageTemplate.
//
// +kubebuilder:object:root=true
type ClusterImageTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the ClusterImageTemplates.
	Items []ClusterImageTemplate `json:"items"`
}

// ClusterImageTemplateSpec is the spec of a ClusterImageTemplate.
type ClusterImageTemplateSpec struct {
	TemplateSpec `json:",inline"`

	// ImagePath is the jsonpath of the image reference in the stamped object, e.g. .status.latestImage.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	ImagePath string `json:"imagePath"`
}

// ClusterConfigTemplate is a cluster-scoped template whose stamped object provides a config, read from
// the stamped object with configPath, e.g. a rendered PodSpec in a ConfigMap.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=cct,categories=carto
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=`.status.conditions[?(@.type=='Ready')].status`
// +kubebuilder:printcolumn:name="REASON",type=string,JSONPath=`.status.conditions[?(@.type=='Ready')].reason`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type ClusterConfigTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the template.
	// +required
	Spec ClusterConfigTemplateSpec `json:"spec"`

	// Status reports whether the template's rules are valid.
	// +optional
	Status TemplateStatus `json:"status,omitempty"`
}

// ClusterConfigTemplateList is a list of ClusterConfigTemplate.
//
// +kubebuilder:object:root=true
type ClusterConfigTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the ClusterConfigTemplates.
	Items []ClusterConfigTemplate `json:"items"`
}

// ClusterConfigTemplateSpec is the spec of a ClusterConfigTemplate.
type ClusterConfigTemplateSpec struct {
	TemplateSpec `json:",inline"`

	// ConfigPath is the jsonpath of the config in the stamped object, e.g. .data.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	ConfigPath string `json:"configPath"`
}
