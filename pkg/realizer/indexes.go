package realizer

import (
	"context"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// Cache indexes that let a template or supply-chain change re-queue exactly the owners
// it affects instead of every owner.
const (
	// indexTemplates indexes supply chains by each template they reference, "Kind/name".
	indexTemplates = "carto.run/templates"
	// indexSupplyChain indexes Workloads by the supply chain they were realized with.
	indexSupplyChain = "carto.run/supply-chain"
)

// SetupIndexes registers the realizer's cache indexes; call it once before the
// reconcilers' SetupWithManager.
func SetupIndexes(ctx context.Context, mgr ctrl.Manager) error {
	idx := mgr.GetFieldIndexer()
	if err := idx.IndexField(ctx, &v1alpha1.ClusterSupplyChain{}, indexTemplates, func(o client.Object) []string {
		var keys []string
		for _, ref := range templateRefs(o.(*v1alpha1.ClusterSupplyChain)) {
			keys = append(keys, ref.String())
		}
		return keys
	}); err != nil {
		return err
	}
	return idx.IndexField(ctx, &v1alpha1.Workload{}, indexSupplyChain, func(o client.Object) []string {
		if ref := o.(*v1alpha1.Workload).Status.SupplyChainRef; ref != nil && ref.Name != "" {
			return []string{ref.Name}
		}
		return nil
	})
}

// supplyChainsUsing lists the supply chains that reference the template kind/name.
func supplyChainsUsing(ctx context.Context, c client.Reader, kind, name string) []ctrl.Request {
	var list v1alpha1.ClusterSupplyChainList
	if err := c.List(ctx, &list, client.MatchingFields{indexTemplates: templateRef{kind, name}.String()}); err != nil {
		logf.FromContext(ctx).Error(err, "listing supply chains by template", "template", kind+"/"+name)
		return nil
	}
	reqs := make([]ctrl.Request, 0, len(list.Items))
	for _, sc := range list.Items {
		reqs = append(reqs, ctrl.Request{NamespacedName: types.NamespacedName{Name: sc.Name}})
	}
	return reqs
}

// workloadsForSupplyChain lists the Workloads a supply-chain change can affect: those
// realized with it, and those its selector could now select (a new or widened supply
// chain may win them over from another one, or rescue a SupplyChainNotFound).
func workloadsForSupplyChain(ctx context.Context, c client.Reader, sc *v1alpha1.ClusterSupplyChain) []ctrl.Request {
	log := logf.FromContext(ctx)
	seen := map[types.NamespacedName]bool{}
	var reqs []ctrl.Request
	add := func(items []v1alpha1.Workload) {
		for _, w := range items {
			key := types.NamespacedName{Namespace: w.Namespace, Name: w.Name}
			if !seen[key] {
				seen[key] = true
				reqs = append(reqs, ctrl.Request{NamespacedName: key})
			}
		}
	}
	var bound v1alpha1.WorkloadList
	if err := c.List(ctx, &bound, client.MatchingFields{indexSupplyChain: sc.Name}); err != nil {
		log.Error(err, "listing workloads by supply chain", "supplyChain", sc.Name)
	}
	add(bound.Items)

	// Narrow the candidates by the label part of the selector when there is one; a
	// selector of fields only can match any Workload.
	sel := labels.Everything()
	if len(sc.Spec.Selector) > 0 {
		sel = labels.SelectorFromSet(sc.Spec.Selector)
	}
	var candidates v1alpha1.WorkloadList
	if err := c.List(ctx, &candidates, client.MatchingLabelsSelector{Selector: sel}); err != nil {
		log.Error(err, "listing workloads by selector", "supplyChain", sc.Name)
	}
	add(candidates.Items)
	return reqs
}

// workloadsForTemplate lists the Workloads realized with a supply chain that
// references the template kind/name.
func workloadsForTemplate(ctx context.Context, c client.Reader, kind, name string) []ctrl.Request {
	var reqs []ctrl.Request
	for _, sc := range supplyChainsUsing(ctx, c, kind, name) {
		var list v1alpha1.WorkloadList
		if err := c.List(ctx, &list, client.MatchingFields{indexSupplyChain: sc.Name}); err != nil {
			logf.FromContext(ctx).Error(err, "listing workloads by supply chain", "supplyChain", sc.Name)
			continue
		}
		for _, w := range list.Items {
			reqs = append(reqs, ctrl.Request{NamespacedName: types.NamespacedName{Namespace: w.Namespace, Name: w.Name}})
		}
	}
	return reqs
}
