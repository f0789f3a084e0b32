package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClusterRunTemplate is the object a Runnable stamps, a run, with $(runnable...)$ and
// $(selected...)$ tags, and the outputs read from its latest run that succeeded. It has no
// status: what became of it is reported on each Runnable that references it.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=crt,categories=carto
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type ClusterRunTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the run to stamp and its outputs.
	// +required
	Spec RunTemplateSpec `json:"spec"`
}

// ClusterRunTemplateList is a list of ClusterRunTemplate.
//
// +kubebuilder:object:root=true
type ClusterRunTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the ClusterRunTemplates.
	Items []ClusterRunTemplate `json:"items"`
}

// RunTemplateSpec is the spec of a ClusterRunTemplate.
type RunTemplateSpec struct {
	// Template is the object each run is, with $(...)$ tags reading runnable (the Runnable) and
	// selected (the object its selector chose). A run is never updated: a new one is created
	// whenever the stamped content changes, so it should set metadata.generateName.
	// +required
	Template RunTemplateObject `json:"template"`

	// Outputs are the values the Runnable reports in status.outputs, by name: jsonpaths read
	// from its latest run whose Succeeded condition is True.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	Outputs map[string]string `json:"outputs,omitempty"`
}

// RunTemplateObject is the object a ClusterRunTemplate stamps, kept as the raw JSON the API
// server stored (as TemplateObject is). Kind, Metadata and Spec are declared so that the
// CRD's rules can see them: Cartographer's webhook refuses a template without a kind, with a
// namespace, or without a top-level spec, and its messages are kept. A run's spec is what
// Cartographer compares to decide whether a run is new; Surveyor compares a digest of the
// whole stamp instead, but keeps the rule so that templates stay portable. Raw is the only
// source of truth; UnmarshalJSON fills Metadata for convenience, and Kind and Spec exist for
// the schema alone.
//
// +kubebuilder:pruning:PreserveUnknownFields
// +kubebuilder:validation:XValidation:rule="has(self.kind)",message="invalid template: failed to parse object: Object 'Kind' is missing"
// +kubebuilder:validation:XValidation:rule="!has(self.metadata) || !has(self.metadata.namespace)",message="invalid template: template should not set metadata.namespace on the child object",fieldPath=".metadata.namespace"
// +kubebuilder:validation:XValidation:rule="has(self.spec)",message="invalid template: object must have a spec"
type RunTemplateObject struct {
	// Raw is the JSON encoding of the whole object.
	Raw []byte `json:"-"`

	// Kind mirrors the object's kind for validation.
	// +optional
	Kind string `json:"kind,omitempty"`

	// Metadata mirrors the object's metadata as far as validation needs it.
	// +optional
	Metadata *TemplateMetadata `json:"metadata,omitempty"`

	// Spec mirrors the object's spec for validation.
	// +optional
	Spec *RunTemplateObjectSpec `json:"spec,omitempty"`
}

// RunTemplateObjectSpec is the spec of a run template's object, whatever it holds. It is an
// object so that the CRD's rules can see whether there is one (a field of unknown type is
// invisible to CEL).
//
// +kubebuilder:pruning:PreserveUnknownFields
type RunTemplateObjectSpec struct{}

// MarshalJSON returns the raw object exactly as it was read, or null when there is none.
func (t RunTemplateObject) MarshalJSON() ([]byte, error) {
	return TemplateObject{Raw: t.Raw}.MarshalJSON()
}

// UnmarshalJSON keeps a copy of data as the raw object, as TemplateObject does.
func (t *RunTemplateObject) UnmarshalJSON(data []byte) error {
	var o TemplateObject
	if err := o.UnmarshalJSON(data); err != nil {
		return err
	}
	*t = RunTemplateObject{Raw: o.Raw, Metadata: o.Metadata}
	return nil
}
