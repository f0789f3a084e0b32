package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClusterSupplyChain is a blueprint for Workloads: it selects Workloads and lists, in order, the
// templates to stamp for each of them and how their outputs feed one another.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=csc,categories=carto
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=`.status.conditions[?(@.type=='Ready')].status`
// +kubebuilder:printcolumn:name="REASON",type=string,JSONPath=`.status.conditions[?(@.type=='Ready')].reason`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type ClusterSupplyChain struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the supply chain.
	// +required
	Spec ClusterSupplyChainSpec `json:"spec"`

	// Status reports whether every referenced template exists.
	// +optional
	Status BlueprintStatus `json:"status,omitempty"`
}

// ClusterSupplyChainList is a list of ClusterSupplyChain.
//
// +kubebuilder:object:root=true
type ClusterSupplyChainList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the ClusterSupplyChains.
	Items []ClusterSupplyChain `json:"items"`
}

// ClusterSupplyChainSpec is the spec of a ClusterSupplyChain.
//
// A spec without any selector is accepted and never matches an owner.
type ClusterSupplyChainSpec struct {
	OwnerSelector `json:",inline"`

	// Params are passed to every template of the supply chain.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=128
	Params []BlueprintParam `json:"params,omitempty"`

	// ServiceAccountRef is the identity that stamps objects for Workloads that name no ServiceAccount.
	// +optional
	ServiceAccountRef *ServiceAccountRef `json:"serviceAccountRef,omitempty"`

	// RolloutStrategy rolls a change of the blueprint, or of a template it references, out to
	// its Workloads group by group, gated by their health (DESIGN §9). Without it, a change
	// reaches every one at once.
	// +optional
	RolloutStrategy *RolloutStrategy `json:"rolloutStrategy,omitempty"`

	// Resources are the templates to stamp, in order.
	// +required
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	Resources []SupplyChainResource `json:"resources"`
}

// SupplyChainResource is one step of a supply chain: a template and the earlier outputs it consumes.
type SupplyChainResource struct {
	// Name identifies the resource within the supply chain; it labels the stamped object.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`

	// TemplateRef is the template to stamp.
	// +required
	TemplateRef SupplyChainTemplateReference `json:"templateRef"`

	// Params are passed to this resource's template and override the supply chain's.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=128
	Params []BlueprintParam `json:"params,omitempty"`

	// Sources are the source outputs of earlier resources this one consumes.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=32
	Sources []ResourceReference `json:"sources,omitempty"`

	// Images are the image outputs of earlier resources this one consumes.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=32
	Images []ResourceReference `json:"images,omitempty"`

	// Configs are the config outputs of earlier resources this one consumes.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=32
	Configs []ResourceReference `json:"configs,omitempty"`
}

// SupplyChainTemplateReference names the template of a supply-chain resource, directly by name or
// through options chosen per Workload. Exactly one of name and options is set.
//
// +kubebuilder:validation:XValidation:rule="has(self.name) != has(self.options)",message="exactly one of name or options must be set"
type SupplyChainTemplateReference struct {
	// Kind is the template's kind.
	// +required
	// +kubebuilder:validation:Enum=ClusterSourceTemplate;ClusterImageTemplate;ClusterConfigTemplate;ClusterTemplate
	Kind string `json:"kind"`

	// Name is the template's name.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name,omitempty"`

	// Options are templates chosen by selector; exactly one must match a Workload.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	Options []TemplateOption `json:"options,omitempty"`
}
