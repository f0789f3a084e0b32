package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClusterDelivery is a blueprint for Deliverables: it selects Deliverables and lists, in order, the
// templates that deploy them.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=cd,categories=carto
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=`.status.conditions[?(@.type=='Ready')].status`
// +kubebuilder:printcolumn:name="REASON",type=string,JSONPath=`.status.conditions[?(@.type=='Ready')].reason`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type ClusterDelivery struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the delivery.
	// +required
	Spec ClusterDeliverySpec `json:"spec"`

	// Status reports whether every referenced template exists.
	// +optional
	Status BlueprintStatus `json:"status,omitempty"`
}

// ClusterDeliveryList is a list of ClusterDelivery.
//
// +kubebuilder:object:root=true
type ClusterDeliveryList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the ClusterDeliveries.
	Items []ClusterDelivery `json:"items"`
}

// ClusterDeliverySpec is the spec of a ClusterDelivery.
//
// A spec without any selector is accepted and never matches an owner.
type ClusterDeliverySpec struct {
	OwnerSelector `json:",inline"`

	// Params are passed to every template of the delivery.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=128
	Params []BlueprintParam `json:"params,omitempty"`

	// ServiceAccountRef is the identity that stamps objects for Deliverables that name no ServiceAccount.
	// +optional
	ServiceAccountRef *ServiceAccountRef `json:"serviceAccountRef,omitempty"`

	// RolloutStrategy rolls a change of the blueprint, or of a template it references, out to
	// its Deliverables group by group, gated by their health (DESIGN §9). Without it, a change
	// reaches every one at once.
	// +optional
	RolloutStrategy *RolloutStrategy `json:"rolloutStrategy,omitempty"`

	// Resources are the templates to stamp, in order.
	// +required
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	Resources []DeliveryResource `json:"resources"`
}

// DeliveryResource is one step of a delivery: a template and the earlier outputs it consumes.
type DeliveryResource struct {
	// Name identifies the resource within the delivery; it labels the stamped object.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`

	// TemplateRef is the template to stamp.
	// +required
	TemplateRef DeliveryTemplateReference `json:"templateRef"`

	// Params are passed to this resource's template and override the delivery's.
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

	// Deployment is the earlier resource whose deployment this one consumes.
	// +optional
	Deployment *DeploymentReference `json:"deployment,omitempty"`

	// Configs are the config outputs of earlier resources this one consumes.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=32
	Configs []ResourceReference `json:"configs,omitempty"`
}

// DeploymentReference names an earlier resource whose deployment a resource consumes.
type DeploymentReference struct {
	// Resource is the name of the earlier resource in the delivery.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Resource string `json:"resource"`

	// Name is the name the deployment goes by in the consuming template; it defaults to the resource's.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name,omitempty"`
}

// DeliveryTemplateReference names the template of a delivery resource, directly by name or through
// options chosen per Deliverable. Exactly one of name and options is set.
//
// +kubebuilder:validation:XValidation:rule="has(self.name) != has(self.options)",message="exactly one of name or options must be set"
type DeliveryTemplateReference struct {
	// Kind is the template's kind.
	// +required
	// +kubebuilder:validation:Enum=ClusterSourceTemplate;ClusterDeploymentTemplate;ClusterTemplate;ClusterConfigTemplate
	Kind string `json:"kind"`

	// Name is the template's name.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name,omitempty"`

	// Options are templates chosen by selector; exactly one must match a Deliverable.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	Options []TemplateOption `json:"options,omitempty"`
}
