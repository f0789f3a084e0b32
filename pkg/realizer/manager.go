package realizer

import (
	"context"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// The manager's own permissions; `make manifests` turns these markers into config/rbac.
// Stamped objects are written and pruned by impersonating each Workload's
// ServiceAccount, so the manager only reads them (any kind a template may stamp,
// hence the wildcard, always through label-filtered informers), reads carto.run
// kinds, writes their status, impersonates service accounts and records events.
// +kubebuilder:rbac:groups=*,resources=*,verbs=get;list;watch
// +kubebuilder:rbac:groups=carto.run,resources=clustersupplychains/status;clusterdeliveries/status;clustersourcetemplates/status;clusterimagetemplates/status;clusterconfigtemplates/status;clusterdeploymenttemplates/status;clustertemplates/status;workloads/status;deliverables/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=impersonate
// +kubebuilder:rbac:groups="";events.k8s.io,resources=events,verbs=create;patch

// CacheOptions restricts the informers of every kind but Surveyor's own to objects
// carrying the carto.run/resource-name label, which every stamped object has.
func CacheOptions() cache.Options {
	stamped, err := labels.NewRequirement(v1alpha1.LabelResourceName, selection.Exists, nil)
	if err != nil {
		panic(err) // a constant, valid key
	}
	everything := cache.ByObject{Label: labels.Everything()}
	byObject := map[client.Object]cache.ByObject{
		&v1alpha1.Workload{}:           everything,
		&v1alpha1.Deliverable{}:        everything,
		&v1alpha1.ClusterSupplyChain{}: everything,
		&v1alpha1.ClusterDelivery{}:    everything,
	}
	for _, newObj := range templateKinds {
		byObject[newObj()] = everything
	}
	return cache.Options{DefaultLabelSelector: labels.NewSelector().Add(*stamped), ByObject: byObject}
}

// Setup registers the realizer's indexes and reconcilers with the manager.
func Setup(ctx context.Context, mgr ctrl.Manager) error {
	if err := SetupIndexes(ctx, mgr); err != nil {
		return err
	}
	if err := (&SupplyChainReconciler{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
		return err
	}
	return NewWorkloadReconciler(mgr).SetupWithManager(mgr)
}
