package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Owner is what Surveyor's one owner reconciler reads and writes of a Workload or a Deliverable:
// the spec fields every owner kind shares, its status, and the reference to its blueprint
// (status.supplyChainRef or status.deliveryRef).
// +kubebuilder:object:generate=false
type Owner interface {
	metav1.Object
	runtime.Object

	// GetParams returns the params the owner passes to its blueprint's templates.
	GetParams() []OwnerParam
	// GetServiceAccountName returns the ServiceAccount the owner names for stamping, or "".
	GetServiceAccountName() string
	// GetTTLSecondsAfterFinished returns how long a Complete owner is kept, or nil to keep it.
	GetTTLSecondsAfterFinished() *int64
	// GetOwnerStatus returns the owner's conditions and resources, to read or to set.
	GetOwnerStatus() *OwnerStatus
	// GetBlueprintRef returns the blueprint the owner was realized with, or nil.
	GetBlueprintRef() *BlueprintReference
	// SetBlueprintRef records the blueprint the owner is realized with.
	SetBlueprintRef(ref *BlueprintReference)
}

var (
	_ Owner = &Workload{}
	_ Owner = &Deliverable{}
)

// GetParams implements Owner.
func (w *Workload) GetParams() []OwnerParam { return w.Spec.Params }

// GetServiceAccountName implements Owner.
func (w *Workload) GetServiceAccountName() string { return w.Spec.ServiceAccountName }

// GetTTLSecondsAfterFinished implements Owner.
func (w *Workload) GetTTLSecondsAfterFinished() *int64 { return w.Spec.TTLSecondsAfterFinished }

// GetOwnerStatus implements Owner.
func (w *Workload) GetOwnerStatus() *OwnerStatus { return &w.Status.OwnerStatus }

// GetBlueprintRef implements Owner: the supply chain.
func (w *Workload) GetBlueprintRef() *BlueprintReference { return w.Status.SupplyChainRef }

// SetBlueprintRef implements Owner: the supply chain.
func (w *Workload) SetBlueprintRef(ref *BlueprintReference) { w.Status.SupplyChainRef = ref }

// GetParams implements Owner.
func (d *Deliverable) GetParams() []OwnerParam { return d.Spec.Params }

// GetServiceAccountName implements Owner.
func (d *Deliverable) GetServiceAccountName() string { return d.Spec.ServiceAccountName }

// GetTTLSecondsAfterFinished implements Owner.
func (d *Deliverable) GetTTLSecondsAfterFinished() *int64 { return d.Spec.TTLSecondsAfterFinished }

// GetOwnerStatus implements Owner.
func (d *Deliverable) GetOwnerStatus() *OwnerStatus { return &d.Status.OwnerStatus }

// GetBlueprintRef implements Owner: the delivery.
func (d *Deliverable) GetBlueprintRef() *BlueprintReference { return d.Status.DeliveryRef }

// SetBlueprintRef implements Owner: the delivery.
func (d *Deliverable) SetBlueprintRef(ref *BlueprintReference) { d.Status.DeliveryRef = ref }
