package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Deliverable is a request to deploy a source through the ClusterDelivery whose selector its labels
// satisfy.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName=dlv,categories=carto
// +kubebuilder:printcolumn:name="SOURCE",type=string,JSONPath=`.spec.source.git.url`
// +kubebuilder:printcolumn:name="DELIVERY",type=string,JSONPath=`.status.deliveryRef.name`
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=`.status.conditions[?(@.type=='Ready')].status`
// +kubebuilder:printcolumn:name="HEALTHY",type=string,JSONPath=`.status.conditions[?(@.type=='ResourcesHealthy')].status`
// +kubebuilder:printcolumn:name="REASON",type=string,JSONPath=`.status.conditions[?(@.type=='Ready')].reason`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type Deliverable struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is what to deploy.
	// +optional
	Spec DeliverableSpec `json:"spec,omitempty"`

	// Status reports the delivery, each stamped resource and the Deliverable's overall state.
	// +optional
	Status DeliverableStatus `json:"status,omitempty"`
}

// DeliverableList is a list of Deliverable.
//
// +kubebuilder:object:root=true
type DeliverableList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the Deliverables.
	Items []Deliverable `json:"items"`
}

// DeliverableSpec is the spec of a Deliverable.
type DeliverableSpec struct {
	// Params override the defaults of the delivery and its templates, but not their fixed values.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=128
	Params []OwnerParam `json:"params,omitempty"`

	// Source is what to deploy.
	// +optional
	Source *Source `json:"source,omitempty"`

	// ServiceAccountName is the ServiceAccount, in the Deliverable's namespace, whose identity stamps
	// the objects. It defaults to the delivery's serviceAccountRef, then to "default".
	// +optional
	// +kubebuilder:validation:MaxLength=253
	ServiceAccountName string `json:"serviceAccountName,omitempty"`

	// TTLSecondsAfterFinished deletes the Deliverable, and with it its stamped objects, this many
	// seconds after it became Complete; 0 deletes it at once. Unset, a complete Deliverable is kept.
	// +optional
	// +kubebuilder:validation:Minimum=0
	TTLSecondsAfterFinished *int64 `json:"ttlSecondsAfterFinished,omitempty"`
}

// DeliverableStatus is the status of a Deliverable.
type DeliverableStatus struct {
	OwnerStatus `json:",inline"`

	// DeliveryRef is the delivery selected for the Deliverable.
	// +optional
	DeliveryRef *BlueprintReference `json:"deliveryRef,omitempty"`
}
