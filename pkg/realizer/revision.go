package realizer

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// Revisions (DESIGN §9): a blueprint with a rolloutStrategy is rolled out as immutable,
// content-addressed snapshots of its spec and of every template it references, stored as
// BlueprintRevision objects. Owners are stamped from the revision they are pinned to.

// maxRevisionName is how much of a blueprint's name a revision's name keeps, leaving room for
// the hash within the 253 characters of an object name.
const maxRevisionName = 240

// revisionHashLen is how many hex digits of the content hash end a revision's name.
const revisionHashLen = 10

// newRevision makes the revision of a blueprint object of kind bk, given the templates it
// references (each exactly once). The same content always gives the same name.
func newRevision(bk *blueprintKind, obj client.Object, templates []client.Object) (*v1alpha1.BlueprintRevision, error) {
	spec, err := json.Marshal(bk.specOf(obj))
	if err != nil {
		return nil, err
	}
	rev := &v1alpha1.BlueprintRevision{Spec: v1alpha1.BlueprintRevisionSpec{
		Blueprint:     v1alpha1.BlueprintReference{Kind: bk.kind, Name: obj.GetName()},
		BlueprintSpec: runtime.RawExtension{Raw: spec},
	}}
	for _, tpl := range templates {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(tpl)
		if err != nil {
			return nil, err
		}
		raw, err := json.Marshal(u["spec"])
		if err != nil {
			return nil, err
		}
		kind := templateOf(tpl).kind
		rev.Spec.Templates = append(rev.Spec.Templates, v1alpha1.RevisionTemplate{Kind: kind, Name: tpl.GetName(), Spec: runtime.RawExtension{Raw: raw}})
	}
	slices.SortFunc(rev.Spec.Templates, func(a, b v1alpha1.RevisionTemplate) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Name, b.Name))
	})
	content, err := json.Marshal(rev.Spec)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(content)
	rev.Spec.Hash = hex.EncodeToString(sum[:])
	name := obj.GetName()
	if len(name) > maxRevisionName {
		name = name[:maxRevisionName]
	}
	rev.Name = name + "-" + rev.Spec.Hash[:revisionHashLen]
	rev.Labels = map[string]string{v1alpha1.LabelBlueprintKind: bk.kind, v1alpha1.LabelBlueprintName: obj.GetName()}
	return rev, nil
}

// ensureRevision creates rev unless it exists. An existing revision of that name has the same
// content: the name is its hash.
func ensureRevision(ctx context.Context, c client.Client, owner client.Object, rev *v1alpha1.BlueprintRevision) error {
	if err := c.Get(ctx, client.ObjectKeyFromObject(rev), &v1alpha1.BlueprintRevision{}); err == nil {
		return nil
	}
	rev.OwnerReferences = []metav1.OwnerReference{{
		APIVersion: v1alpha1.GroupVersion.String(), Kind: rev.Spec.Blueprint.Kind, Name: owner.GetName(), UID: owner.GetUID(),
	}}
	if err := c.Create(ctx, rev); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating revision %s: %w", rev.Name, err)
	}
	return nil
}

// blueprintAt is the blueprint as revision rev holds it, with the live blueprint's identity
// and status.
func blueprintAt(bk *blueprintKind, live *blueprint, rev *v1alpha1.BlueprintRevision) (*blueprint, error) {
	obj, err := bk.withSpec(live.name, rev.Spec.BlueprintSpec.Raw)
	if err != nil {
		return nil, fmt.Errorf("revision %s: blueprint spec: %w", rev.Name, err)
	}
	bp := bk.of(obj)
	bp.generation, bp.status, bp.strategy = live.generation, live.status, live.strategy
	bp.revision = rev.Name
	bp.templates = map[templateRef]client.Object{}
	for _, t := range rev.Spec.Templates {
		tpl, err := newTemplate(t.Kind)
		if err != nil {
			return nil, fmt.Errorf("revision %s: %w", rev.Name, err)
		}
		doc, err := json.Marshal(map[string]any{"metadata": map[string]any{"name": t.Name}, "spec": t.Spec})
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(doc, tpl); err != nil {
			return nil, fmt.Errorf("revision %s: template %s/%s: %w", rev.Name, t.Kind, t.Name, err)
		}
		bp.templates[templateRef{t.Kind, t.Name}] = tpl
	}
	return bp, nil
}

// template reads the template kind/name the realization stamps from: the one its blueprint's
// revision holds, or the template as it is now. A template the revision does not hold is not
// found.
func (rz *realization) template(kind, name string) (client.Object, error) {
	if rz.bp.templates != nil {
		if tpl, ok := rz.bp.templates[templateRef{kind, name}]; ok {
			return tpl.DeepCopyObject().(client.Object), nil
		}
		if _, err := newTemplate(kind); err != nil {
			return nil, err
		}
		return nil, apierrors.NewNotFound(v1alpha1.Resource("templates"), name)
	}
	tpl, err := newTemplate(kind)
	if err != nil {
		return nil, err
	}
	return tpl, rz.r.client.Get(rz.ctx, client.ObjectKey{Name: name}, tpl)
}
