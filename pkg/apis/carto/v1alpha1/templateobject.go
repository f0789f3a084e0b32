package v1alpha1

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// TemplateObject is the Kubernetes object a template stamps, with its $(...)$ tags. It is kept as the
// raw JSON the API server stored, so that every field survives untouched, including tags in places a
// schema would type (for example `replicas: $(params.replicas)$`).
//
// Raw is the only source of truth: MarshalJSON writes it back byte for byte. Metadata is declared so
// that the CRD schema can see metadata.namespace (the fields of a preserve-unknown-fields object are
// invisible to CEL) and reject it. UnmarshalJSON fills it for convenience; MarshalJSON ignores it.
//
// The schema is `type: object` because this is a struct. It deliberately has no validation:Type=object
// marker: controller-gen would replace the whole schema with that type, dropping the declared
// metadata property and with it the field the CEL rule reads.
//
// +kubebuilder:pruning:PreserveUnknownFields
// +kubebuilder:validation:XValidation:rule="!has(self.metadata) || !has(self.metadata.namespace)",message="template must not set metadata.namespace: stamped objects always go to the owner's namespace",fieldPath=".metadata.namespace"
type TemplateObject struct {
	// Raw is the JSON encoding of the whole object.
	Raw []byte `json:"-"`

	// Metadata mirrors the object's metadata as far as validation needs it.
	// +optional
	Metadata *TemplateMetadata `json:"metadata,omitempty"`
}

// TemplateMetadata is the part of a template's metadata the CRD schema validates. Every other field
// (name, labels, annotations, ...) is preserved as written.
//
// +kubebuilder:pruning:PreserveUnknownFields
type TemplateMetadata struct {
	// Namespace must not be set: stamped objects always go to the owner's namespace.
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// MarshalJSON returns the raw object exactly as it was read, or null when there is none.
func (t TemplateObject) MarshalJSON() ([]byte, error) {
	if len(t.Raw) == 0 {
		return []byte("null"), nil
	}
	return t.Raw, nil
}

// UnmarshalJSON keeps a copy of data as the raw object. It rejects anything but a JSON object or null.
func (t *TemplateObject) UnmarshalJSON(data []byte) error {
	if bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		t.Raw, t.Metadata = nil, nil
		return nil
	}
	var probe struct {
		Metadata *TemplateMetadata `json:"metadata"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return fmt.Errorf("decoding template: %w", err)
	}
	t.Raw = bytes.Clone(data)
	t.Metadata = probe.Metadata
	return nil
}
