package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Workload is a developer's request to take an application down a path to production: the supply
// chain whose selector its labels satisfy stamps one object per template for it.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName=wld,categories=carto
// +kubebuilder:printcolumn:name="SOURCE",type=string,JSONPath=`.spec.source.git.url`
// +kubebuilder:printcolumn:name="SUPPLYCHAIN",type=string,JSONPath=`.status.supplyChainRef.name`
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=`.status.conditions[?(@.type=='Ready')].status`
// +kubebuilder:printcolumn:name="HEALTHY",type=string,JSONPath=`.status.conditions[?(@.type=='ResourcesHealthy')].status`
// +kubebuilder:printcolumn:name="REASON",type=string,JSONPath=`.status.conditions[?(@.type=='Ready')].reason`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type Workload struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is what the developer asks for.
	// +optional
	Spec WorkloadSpec `json:"spec,omitempty"`

	// Status reports the supply chain, each stamped resource and the Workload's overall state.
	// +optional
	Status WorkloadStatus `json:"status,omitempty"`
}

// WorkloadList is a list of Workload.
//
// +kubebuilder:object:root=true
type WorkloadList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the Workloads.
	Items []Workload `json:"items"`
}

// WorkloadSpec is the spec of a Workload. Templates read any of it as $(workload.spec...)$.
type WorkloadSpec struct {
	// Params override the defaults of the supply chain and its templates, but not their fixed values.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=128
	Params []OwnerParam `json:"params,omitempty"`

	// Source is where the application's source comes from.
	// +optional
	Source *Source `json:"source,omitempty"`

	// Build configures building the application.
	// +optional
	Build *WorkloadBuild `json:"build,omitempty"`

	// Env is the application's environment.
	// +optional
	// +listType=atomic
	Env []corev1.EnvVar `json:"env,omitempty"`

	// Image is a pre-built image to run instead of building the source.
	// +optional
	Image string `json:"image,omitempty"`

	// Resources are the application's compute resource requirements.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`

	// ServiceAccountName is the ServiceAccount, in the Workload's namespace, whose identity stamps the
	// objects. It defaults to the supply chain's serviceAccountRef, then to "default".
	// +optional
	// +kubebuilder:validation:MaxLength=253
	ServiceAccountName string `json:"serviceAccountName,omitempty"`

	// ServiceClaims are the services the application binds to.
	// +optional
	// +listType=map
	// +listMapKey=name
	ServiceClaims []WorkloadServiceClaim `json:"serviceClaims,omitempty"`

	// TTLSecondsAfterFinished deletes the Workload, and with it its stamped objects, this many seconds
	// after it became Complete; 0 deletes it at once. Unset, a complete Workload is kept.
	// +optional
	// +kubebuilder:validation:Minimum=0
	TTLSecondsAfterFinished *int64 `json:"ttlSecondsAfterFinished,omitempty"`
}

// OwnerParam is a param an owner passes to its blueprint's templates.
type OwnerParam struct {
	// Name is the param's name.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Value is the param's value. Any JSON value.
	// +required
	Value apiextensionsv1.JSON `json:"value"`
}

// Source is where an owner's source comes from: a git repository or an image, optionally narrowed
// to a sub-path.
//
// +kubebuilder:validation:XValidation:rule="!(has(self.git) && has(self.image))",message="set source.git or source.image, not both"
type Source struct {
	// Git is a git repository.
	// +optional
	Git *GitSource `json:"git,omitempty"`

	// Image is an image holding the source.
	// +optional
	Image string `json:"image,omitempty"`

	// SubPath is the directory within the source that holds the application.
	// +optional
	SubPath string `json:"subPath,omitempty"`
}

// GitSource is a git repository and the ref to follow.
type GitSource struct {
	// URL is the repository's URL.
	// +optional
	URL string `json:"url,omitempty"`

	// Ref is the branch, tag or commit to follow.
	// +optional
	Ref *GitRef `json:"ref,omitempty"`
}

// GitRef is a git branch, tag or commit.
type GitRef struct {
	// Branch is a branch name.
	// +optional
	Branch string `json:"branch,omitempty"`

	// Tag is a tag name.
	// +optional
	Tag string `json:"tag,omitempty"`

	// Commit is a commit SHA.
	// +optional
	Commit string `json:"commit,omitempty"`
}

// WorkloadBuild configures building a Workload's application.
type WorkloadBuild struct {
	// Env is the build's environment.
	// +optional
	// +listType=atomic
	Env []corev1.EnvVar `json:"env,omitempty"`
}

// WorkloadServiceClaim binds the application to a service.
type WorkloadServiceClaim struct {
	// Name is the claim's name.
	// +required
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`

	// Ref is the object providing the service.
	// +optional
	Ref *WorkloadServiceClaimReference `json:"ref,omitempty"`
}

// WorkloadServiceClaimReference identifies the object providing a claimed service.
type WorkloadServiceClaimReference struct {
	// APIVersion is the object's group/version.
	// +required
	APIVersion string `json:"apiVersion"`

	// Kind is the object's kind.
	// +required
	Kind string `json:"kind"`

	// Name is the object's name, in the Workload's namespace.
	// +required
	Name string `json:"name"`
}

// WorkloadStatus is the status of a Workload.
type WorkloadStatus struct {
	OwnerStatus `json:",inline"`

	// SupplyChainRef is the supply chain selected for the Workload.
	// +optional
	SupplyChainRef *BlueprintReference `json:"supplyChainRef,omitempty"`
}
