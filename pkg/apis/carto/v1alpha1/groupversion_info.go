package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of every kind in this package.
const GroupName = "carto.run"

var (
	// GroupVersion is the group and version of every kind in this package.
	GroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1alpha1"}

	// SchemeBuilder collects the functions that register this package's kinds with a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme registers every kind of this package, and their List kinds, with a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// Kind names, as they appear in a templateRef, a stampedRef or a supplyChainRef.
const (
	// KindClusterSourceTemplate is the kind of ClusterSourceTemplate.
	KindClusterSourceTemplate = "ClusterSourceTemplate"
	// KindClusterImageTemplate is the kind of ClusterImageTemplate.
	KindClusterImageTemplate = "ClusterImageTemplate"
	// KindClusterConfigTemplate is the kind of ClusterConfigTemplate.
	KindClusterConfigTemplate = "ClusterConfigTemplate"
	// KindClusterDeploymentTemplate is the kind of ClusterDeploymentTemplate.
	KindClusterDeploymentTemplate = "ClusterDeploymentTemplate"
	// KindClusterTemplate is the kind of ClusterTemplate.
	KindClusterTemplate = "ClusterTemplate"
	// KindClusterSupplyChain is the kind of ClusterSupplyChain.
	KindClusterSupplyChain = "ClusterSupplyChain"
	// KindClusterDelivery is the kind of ClusterDelivery.
	KindClusterDelivery = "ClusterDelivery"
	// KindWorkload is the kind of Workload.
	KindWorkload = "Workload"
	// KindDeliverable is the kind of Deliverable.
	KindDeliverable = "Deliverable"
	// KindBlueprintRevision is the kind of BlueprintRevision.
	KindBlueprintRevision = "BlueprintRevision"
	// KindRunnable is the kind of Runnable.
	KindRunnable = "Runnable"
	// KindClusterRunTemplate is the kind of ClusterRunTemplate.
	KindClusterRunTemplate = "ClusterRunTemplate"
)

// Resource returns the group-qualified resource for a plural resource name of this group,
// e.g. Resource("workloads") is workloads.carto.run.
func Resource(resource string) schema.GroupResource {
	return GroupVersion.WithResource(resource).GroupResource()
}

// addKnownTypes registers the kinds by hand rather than through controller-runtime's scheme builder,
// so that this package depends on apimachinery only.
func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion,
		&ClusterSourceTemplate{}, &ClusterSourceTemplateList{},
		&ClusterImageTemplate{}, &ClusterImageTemplateList{},
		&ClusterConfigTemplate{}, &ClusterConfigTemplateList{},
		&ClusterDeploymentTemplate{}, &ClusterDeploymentTemplateList{},
		&ClusterTemplate{}, &ClusterTemplateList{},
		&ClusterSupplyChain{}, &ClusterSupplyChainList{},
		&ClusterDelivery{}, &ClusterDeliveryList{},
		&Workload{}, &WorkloadList{},
		&Deliverable{}, &DeliverableList{},
		&BlueprintRevision{}, &BlueprintRevisionList{},
		&Runnable{}, &RunnableList{},
		&ClusterRunTemplate{}, &ClusterRunTemplateList{},
	)
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}
