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
	for _, bk := range blueprintKinds {
		if err := idx.IndexField(ctx, bk.newObject(), indexTemplates, func(o client.Object) []string {
			var keys []string
			for _, ref := range bk.of(o).templateRefs() {
				keys = append(keys, ref.template.String())
			}
			return keys
		}); err != nil {
			return err
		}
	}
	for _, ok := range ownerKinds {
		if err := idx.IndexField(ctx, ok.newObject(), indexBlueprint, func(o client.Object) []string {
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
func blueprintsUsing(ctx context.Context, c client.Reader, bk *blueprintKind, kind, name string) []*blueprint {
	list := bk.newList()
	if err := c.List(ctx, list, client.MatchingFields{indexTemplates: templateRef{kind, name}.String()}); err != nil {
		logf.FromContext(ctx).Error(err, "listing blueprints by template", "kind", bk.kind, "template", kind+"/"+name)
		return nil
	}
	return bk.items(list)
}

// ownersForBlueprint lists the owners a blueprint change can affect: those realized with
// it, and those its selector could now select (a new or widened blueprint may win them
// over from another one, or rescue a not-found).
func ownersForBlueprint(ctx context.Context, c client.Reader, ok *ownerKind, bp *blueprint) []ctrl.Request {
	var reqs requests
	reqs.add(ctx, c, ok, client.MatchingFields{indexBlueprint: bp.name})
	// Narrow the candidates by the label part of the selector when there is one; a
	// selector of fields only can match any owner.
	sel := labels.Everything()
	if len(bp.selector.Selector) > 0 {
		sel = labels.SelectorFromSet(bp.selector.Selector)
	}
	reqs.add(ctx, c, ok, client.MatchingLabelsSelector{Selector: sel})
	return reqs.list
}

// ownersForTemplate lists the owners realized with a blueprint that references the
// template kind/name.
func ownersForTemplate(ctx context.Context, c client.Reader, ok *ownerKind, kind, name string) []ctrl.Request {
	var reqs requests
	for _, bp := range blueprintsUsing(ctx, c, ok.blueprint, kind, name) {
		reqs.add(ctx, c, ok, client.MatchingFields{indexBlueprint: bp.name})
	}
	return reqs.list
}

// requests gathers the owners of several lists once each.
type requests struct {
	seen map[types.NamespacedName]bool
	list []ctrl.Request
}

func (r *requests) add(ctx context.Context, c client.Reader, ok *ownerKind, opt client.ListOption) {
	list := ok.newList()
	if err := c.List(ctx, list, opt); err != nil {
		logf.FromContext(ctx).Error(err, "listing owners", "kind", ok.kind)
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
