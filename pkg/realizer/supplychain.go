package realizer

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// SupplyChainReconciler reports whether a ClusterSupplyChain's templates exist:
// conditions TemplatesReady and Ready.
type SupplyChainReconciler struct {
	Client client.Client
}

// SetupWithManager registers the reconciler; a template change re-queues the supply
// chains that reference it, found through the template index.
func (r *SupplyChainReconciler) SetupWithManager(mgr ctrl.Manager) error {
	b := ctrl.NewControllerManagedBy(mgr).Named("clustersupplychain").For(&v1alpha1.ClusterSupplyChain{})
	for kind, newObj := range templateKinds {
		b = b.Watches(newObj(), handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []ctrl.Request {
			return supplyChainsUsing(ctx, r.Client, kind, o.GetName())
		}))
	}
	return b.Complete(r)
}

// Reconcile computes the supply chain's status from the templates it references.
func (r *SupplyChainReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	sc := &v1alpha1.ClusterSupplyChain{}
	if err := r.Client.Get(ctx, req.NamespacedName, sc); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	var missing []string
	for _, ref := range templateRefs(sc) {
		obj, err := newTemplate(ref.kind)
		if err != nil {
			missing = append(missing, ref.String())
			continue
		}
		if err := r.Client.Get(ctx, client.ObjectKey{Name: ref.name}, obj); err != nil {
			if !apierrors.IsNotFound(err) {
				return ctrl.Result{}, err
			}
			missing = append(missing, ref.String())
		}
	}
	want := supplyChainConditions(missing, sc.Generation)
	orig := sc.DeepCopy()
	sc.Status.ObservedGeneration = sc.Generation
	sc.Status.Conditions = mergeConditions(sc.Status.Conditions, want, metav1.Now())
	if equality.Semantic.DeepEqual(orig.Status, sc.Status) {
		return ctrl.Result{}, nil
	}
	return ctrl.Result{}, r.Client.Status().Patch(ctx, sc, client.MergeFrom(orig))
}

// supplyChainConditions is TemplatesReady and Ready for the given missing templates.
func supplyChainConditions(missing []string, generation int64) []metav1.Condition {
	ready := metav1.Condition{
		Type: v1alpha1.ConditionTemplatesReady, Status: metav1.ConditionTrue,
		Reason: v1alpha1.ReasonReady, ObservedGeneration: generation,
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		ready.Status, ready.Reason = metav1.ConditionFalse, v1alpha1.ReasonTemplatesNotFound
		ready.Message = fmt.Sprintf("did not find the templates [%s]", strings.Join(slices.Compact(missing), ", "))
	}
	top := ready
	top.Type = v1alpha1.ConditionReady
	return []metav1.Condition{ready, top}
}

// templateRef is one template a supply chain references, directly or as an option.
type templateRef struct{ kind, name string }

func (t templateRef) String() string { return t.kind + "/" + t.name }

func templateRefs(sc *v1alpha1.ClusterSupplyChain) []templateRef {
	var refs []templateRef
	for _, res := range sc.Spec.Resources {
		if res.TemplateRef.Name != "" {
			refs = append(refs, templateRef{res.TemplateRef.Kind, res.TemplateRef.Name})
		}
		for _, opt := range res.TemplateRef.Options {
			if opt.Name != "" {
				refs = append(refs, templateRef{res.TemplateRef.Kind, opt.Name})
			}
		}
	}
	return refs
}
