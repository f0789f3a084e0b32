package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// BlueprintRevision is an immutable, content-addressed snapshot of a blueprint with a
// rolloutStrategy and of every template it references (DESIGN §9). Owners are stamped from the
// revision they are pinned to, so a change rolls out group by group and a pinned owner survives
// the deletion of a template that a newer revision dropped. Its name ends in the hash of its
// content: the same content always gives the same revision back.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=bprev,categories=carto
// +kubebuilder:printcolumn:name="BLUEPRINT-KIND",type=string,JSONPath=`.spec.blueprint.kind`
// +kubebuilder:printcolumn:name="BLUEPRINT",type=string,JSONPath=`.spec.blueprint.name`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="self.spec == oldSelf.spec",message="a revision is immutable"
type BlueprintRevision struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the snapshot.
	// +required
	Spec BlueprintRevisionSpec `json:"spec"`
}

// BlueprintRevisionSpec is a blueprint's spec, without its rolloutStrategy, and the specs of the
// templates it references.
type BlueprintRevisionSpec struct {
	// Blueprint names the blueprint the snapshot is of.
	// +required
	Blueprint BlueprintReference `json:"blueprint"`

	// Hash is the hex SHA-256 of the snapshot's content.
	// +required
	Hash string `json:"hash"`

	// BlueprintSpec is the blueprint's spec, without rolloutStrategy.
	// +required
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	BlueprintSpec runtime.RawExtension `json:"blueprintSpec"`

	// Templates are the templates the blueprint references, sorted by kind and name.
	// +optional
	// +listType=atomic
	Templates []RevisionTemplate `json:"templates,omitempty"`
}

// RevisionTemplate is one template's spec in a revision.
type RevisionTemplate struct {
	// Kind is the template's kind, e.g. ClusterTemplate.
	// +required
	Kind string `json:"kind"`

	// Name is the template's name.
	// +required
	Name string `json:"name"`

	// Spec is the template's spec.
	// +required
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	Spec runtime.RawExtension `json:"spec"`
}

// BlueprintRevisionList is a list of BlueprintRevision.
//
// +kubebuilder:object:root=true
type BlueprintRevisionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the BlueprintRevisions.
	Items []BlueprintRevision `json:"items"`
}
