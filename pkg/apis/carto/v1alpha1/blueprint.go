package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Types shared by the two blueprints, ClusterSupplyChain and ClusterDelivery.
//
// The other fields their specs have in common (params, serviceAccountRef, rolloutStrategy, and a
// resource's name, params, sources and configs) are declared once per kind on purpose, as are
// those Workload and Deliverable have in common. A field's doc comment is its CRD description,
// and all but two of them speak of their own kind ("the supply chain", "Workloads"), so one
// shared declaration would change a CRD (config/crd TestGeneratedFilesAreCurrent). Those two, a
// resource's sources and configs, cannot move into an embedded struct without reordering the
// spec's JSON, which revisions hash (TestBlueprintSpecEncodingIsStable): a resource's images or
// deployment sits between its sources and configs.

// OwnerSelector chooses the owners (Workloads or Deliverables) a blueprint realizes. All given
// requirements must hold; the blueprint satisfying the most requirements wins (DESIGN §3.1).
type OwnerSelector struct {
	// Selector holds labels the owner must carry with these values.
	// +optional
	Selector map[string]string `json:"selector,omitempty"`

	// SelectorMatchExpressions are label requirements on the owner.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	SelectorMatchExpressions []metav1.LabelSelectorRequirement `json:"selectorMatchExpressions,omitempty"`

	// SelectorMatchFields are jsonpath requirements on the owner, e.g. {key: spec.source.git, operator: Exists}.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	SelectorMatchFields []FieldSelectorRequirement `json:"selectorMatchFields,omitempty"`
}

// BlueprintParam is a param a blueprint or one of its resources passes to templates. A value cannot be
// overridden by the owner; a default can.
//
// value and default hold any JSON, so their schemas have no type, and CEL cannot see untyped fields:
// has(self.value) does not compile. The rule therefore counts the object's keys, which after pruning
// can only be name, value and default. Adding a field to this type means revisiting the rule.
//
// +kubebuilder:validation:XValidation:rule="size(dyn(self)) == 2",message="exactly one of value or default must be set"
type BlueprintParam struct {
	// Name is the param's name.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Value is a fixed value that the owner's params cannot override. Any JSON value.
	// +optional
	Value *apiextensionsv1.JSON `json:"value,omitempty"`

	// Default is a value that the owner's params override. Any JSON value.
	// +optional
	Default *apiextensionsv1.JSON `json:"default,omitempty"`
}

// ServiceAccountRef names the ServiceAccount whose identity stamps objects for owners that name none.
type ServiceAccountRef struct {
	// Name is the ServiceAccount's name.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Namespace is the ServiceAccount's namespace; it defaults to the owner's.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace,omitempty"`
}

// ResourceReference names an earlier resource of the blueprint whose output a resource consumes.
type ResourceReference struct {
	// Name is the name the output goes by in the consuming template, e.g. sources.<name>.url.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Resource is the name of the earlier resource in the blueprint.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Resource string `json:"resource"`
}

// TemplateOption is one choice of a templateRef with options: the template to use, or the input to
// pass through, for the owners the selector matches. Exactly one of name and passThrough is set.
//
// +kubebuilder:validation:XValidation:rule="has(self.name) != has(self.passThrough)",message="exactly one of name or passThrough must be set"
type TemplateOption struct {
	// Name is the template to stamp when this option is chosen.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name,omitempty"`

	// Selector chooses the owners this option applies to.
	// +required
	Selector Selector `json:"selector"`

	// PassThrough names an input (sources, images or configs entry) forwarded unchanged as this
	// resource's output instead of stamping anything.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	PassThrough string `json:"passThrough,omitempty"`
}

// BlueprintStatus is the status of a ClusterSupplyChain or ClusterDelivery.
type BlueprintStatus struct {
	// ObservedGeneration is the generation of the spec this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions hold TemplatesReady (every referenced template exists) and Ready, and with a
	// rolloutStrategy RolloutProgressing and RolloutDegraded.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Rollout is the progress of the latest change, with a rolloutStrategy.
	// +optional
	Rollout *BlueprintRolloutStatus `json:"rollout,omitempty"`
}
