package realizer

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/render"
)

// Cache indexes that let a template or blueprint change re-queue exactly the owners it
// affects instead of every owner.
const (
	// indexTemplates indexes blueprints by each template they reference, "Kind/name".
	indexTemplates = "carto.run/templates"
	// indexBlueprint indexes owners by the blueprint they were realized with.
	indexBlueprint = "carto.run/blueprint"
)

// SetupIndexes registers the realizer's cache indexes, for every blueprint and owner
// kind; call it once before the reconcilers' SetupWithManager.
func SetupIndexes(ctx context.Context, mgr ctrl.Manager) error {
	idx := mgr.GetFieldIndexer()
	for _, bk := range v1alpha1.BlueprintKinds {
		if err := idx.IndexField(ctx, bk.New(), indexTemplates, func(o client.Object) []string {
			var keys []string
			for _, ref := range render.BlueprintOf(o.(v1alpha1.Blueprint)).TemplateRefs() {
				keys = append(keys, ref.Template.String())
			}
			return keys
		}); err != nil {
			return err
		}
	}
	for _, ok := range v1alpha1.OwnerKinds {
		if err := idx.IndexField(ctx, ok.New(), indexBlueprint, func(o client.Object) []string {
			if ref := o.(v1alpha1.Owner).GetBlueprintRef(); ref != nil && ref.Name != "" {
				return []string{ref.Name}
			}
			return nil
		}); err != nil {
			return err
		}
	}
	return nil
}

// blueprintsUsing lists the blueprints of a kind that reference the template kind/name.
func blueprintsUsing(ctx context.Context, c client.Reader, bk *v1alpha1.BlueprintKind, kind, name string) []*render.Blueprint {
	list := bk.NewList()
	if err := c.List(ctx, list, client.MatchingFields{indexTemplates: render.TemplateRef{Kind: kind, Name: name}.String()}); err != nil {
		logf.FromContext(ctx).Error(err, "listing blueprints by template", "kind", bk.Kind, "template", kind+"/"+name)
		return nil
	}
	return render.BlueprintsOf(list)
}

// ownersForBlueprint lists the owners a blueprint change can affect: those realized with
// it, and those its selector could now select (a new or widened blueprint may win them
// over from another one, or rescue a not-found).
func ownersForBlueprint(ctx context.Context, c client.Reader, ok *v1alpha1.OwnerKind, bp *render.Blueprint) []ctrl.Request {
	var reqs requests
	reqs.add(ctx, c, ok, client.MatchingFields{indexBlueprint: bp.Name})
	// Narrow the candidates by the label part of the selector when there is one; a
	// selector of fields only can match any owner.
	sel := labels.Everything()
	if len(bp.Selector.Selector) > 0 {
		sel = labels.SelectorFromSet(bp.Selector.Selector)
	}
	reqs.add(ctx, c, ok, client.MatchingLabelsSelector{Selector: sel})
	return reqs.list
}

// ownersForTemplate lists the owners realized with a blueprint that references the
// template kind/name.
func ownersForTemplate(ctx context.Context, c client.Reader, ok *v1alpha1.OwnerKind, kind, name string) []ctrl.Request {
	var reqs requests
	for _, bp := range blueprintsUsing(ctx, c, ok.Blueprint, kind, name) {
		reqs.add(ctx, c, ok, client.MatchingFields{indexBlueprint: bp.Name})
	}
	return reqs.list
}

// requests gathers the owners of several lists once each.
type requests struct {
	seen map[types.NamespacedName]bool
	list []ctrl.Request
}

func (r *requests) add(ctx context.Context, c client.Reader, ok *v1alpha1.OwnerKind, opt client.ListOption) {
	list := ok.NewList()
	if err := c.List(ctx, list, opt); err != nil {
		logf.FromContext(ctx).Error(err, "listing owners", "kind", ok.Kind)
		return
	}
	if r.seen == nil {
		r.seen = map[types.NamespacedName]bool{}
	}
	_ = meta.EachListItem(list, func(o runtime.Object) error {
		obj := o.(client.Object)
		key := client.ObjectKeyFromObject(obj)
		if !r.seen[key] {
			r.seen[key] = true
			r.list = append(r.list, ctrl.Request{NamespacedName: key})
		}
		return nil
	})
}
