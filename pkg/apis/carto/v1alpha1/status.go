package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// OwnerStatus is the status shared by the owners, Workload and Deliverable: the owner conditions and
// one entry per resource of the blueprint. UIs, the CLI and `kubectl wait` read this and nothing else.
//
// Its lists are atomic: the owner reconciler alone writes them, always whole. The managed
// fields of a keyed list name every key and field in it, which for a Workload with three
// resources was 4.1 KB of its 8.8 KB, carried by every status write and watch event and
// decoded several times by the API server on each write; an atomic list is one field.
type OwnerStatus struct {
	// ObservedGeneration is the owner generation this status was computed for.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions are, in order, SupplyChainReady (DeliveryReady for a Deliverable), ResourcesSubmitted,
	// ResourcesHealthy, Ready and Available, then one per condition-rule type such as Complete.
	// +optional
	// +listType=atomic
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Resources report each resource of the blueprint: what was stamped from which template, its
	// inputs and outputs, and its conditions.
	// +optional
	// +listType=atomic
	Resources []ResourceStatus `json:"resources,omitempty"`

	// BlueprintRevision is the revision of the blueprint the owner is realized at, when its
	// blueprint has a rolloutStrategy.
	// +optional
	BlueprintRevision string `json:"blueprintRevision,omitempty"`

	// Rollout is the owner's place in its blueprint's rollout, when it has a rolloutStrategy.
	// +optional
	Rollout *OwnerRolloutStatus `json:"rollout,omitempty"`

	// PendingDeletions are the objects the owner stamped and stamps no longer (their resource
	// left the blueprint, or stamps another object now) that are not deleted yet: the delete
	// failed, or waits for a pass in which every resource was submitted. Each is tried again
	// on every reconcile and listed until its delete succeeds or it is gone. They change no
	// condition: the resources the owner stamps now are what Ready judges.
	// +optional
	// +listType=atomic
	PendingDeletions []PendingDeletion `json:"pendingDeletions,omitempty"`
}

// PendingDeletion is a stamped object awaiting deletion (OwnerStatus.PendingDeletions).
type PendingDeletion struct {
	// Resource is the name of the blueprint resource the object was stamped for.
	// +required
	Resource string `json:"resource"`

	// StampedRef is the object.
	// +required
	StampedRef StampedRef `json:"stampedRef"`

	// Message says why the object is still there: the API server's answer to the last
	// delete, or that the delete waits for every resource to be submitted. It is cut to
	// 1024 bytes, ending in "...", so that many pending deletions still fit in a status.
	// +optional
	Message string `json:"message,omitempty"`

	// Since is when the object was first found awaiting deletion.
	// +required
	Since metav1.Time `json:"since"`
}

// ResourceStatus is the status of one resource of an owner's blueprint.
type ResourceStatus struct {
	// Name is the resource's name in the blueprint.
	// +required
	Name string `json:"name"`

	// StampedRef is the object stamped for the resource, once there is one.
	// +optional
	StampedRef *StampedRef `json:"stampedRef,omitempty"`

	// TemplateRef is the template the object was stamped from.
	// +optional
	TemplateRef *TemplateReference `json:"templateRef,omitempty"`

	// Inputs name the resources whose outputs this resource consumed.
	// +optional
	// +listType=atomic
	Inputs []Input `json:"inputs,omitempty"`

	// Outputs are the values read from the stamped object: url and revision, image, or config.
	// +optional
	// +listType=atomic
	Outputs []Output `json:"outputs,omitempty"`

	// ObservedGeneration is the owner generation this resource's stamp and health refer to.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions are, in order, ResourceSubmitted, Healthy and Ready, then the resource's rule
	// conditions such as Complete.
	// +optional
	// +listType=atomic
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// StampedRef identifies a stamped object.
type StampedRef struct {
	// APIVersion is the object's group/version, e.g. apps/v1.
	// +required
	APIVersion string `json:"apiVersion"`

	// Kind is the object's kind.
	// +required
	Kind string `json:"kind"`

	// Namespace is the object's namespace, always the owner's.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// Name is the object's name.
	// +required
	Name string `json:"name"`

	// Resource is the object's resource: the plural, qualified by the group unless it is the core
	// group, e.g. configmaps or tests.test.run.
	// +optional
	Resource string `json:"resource,omitempty"`
}

// TemplateReference identifies the template a resource was stamped from.
type TemplateReference struct {
	// APIVersion is carto.run/v1alpha1.
	// +required
	APIVersion string `json:"apiVersion"`

	// Kind is the template's kind.
	// +required
	Kind string `json:"kind"`

	// Name is the template's name.
	// +required
	Name string `json:"name"`
}

// Input names a resource whose outputs a resource consumed.
type Input struct {
	// Name is the consumed resource's name.
	// +required
	Name string `json:"name"`
}

// Output is one value read from a stamped object.
type Output struct {
	// Name is the output: url, revision, image or config.
	// +required
	Name string `json:"name"`

	// Preview is the value as YAML, cut at 1024 bytes.
	// +optional
	Preview string `json:"preview,omitempty"`

	// Digest is "sha256:" and the hex SHA-256 of the value's full YAML; for a value read from
	// a Secret (or derived from one), "hmac-sha256:" and the hex HMAC-SHA256 under the
	// controller's key, which cannot be brute-forced.
	// +optional
	Digest string `json:"digest,omitempty"`

	// LastTransitionTime is when the digest last changed.
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
}

// BlueprintReference names the blueprint (ClusterSupplyChain or ClusterDelivery) realizing an owner.
type BlueprintReference struct {
	// Kind is ClusterSupplyChain or ClusterDelivery.
	// +required
	Kind string `json:"kind"`

	// Name is the blueprint's name.
	// +required
	Name string `json:"name"`
}
