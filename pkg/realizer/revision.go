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
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/render"
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
func newRevision(bk *v1alpha1.BlueprintKind, obj v1alpha1.Blueprint, templates []v1alpha1.Template) (*v1alpha1.BlueprintRevision, error) {
	spec, err := json.Marshal(obj.SpecWithoutRollout())
	if err != nil {
		return nil, err
	}
	rev := &v1alpha1.BlueprintRevision{Spec: v1alpha1.BlueprintRevisionSpec{
		Blueprint:     v1alpha1.BlueprintReference{Kind: bk.Kind, Name: obj.GetName()},
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
		kind := v1alpha1.TemplateKindOf(tpl).Kind
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
	rev.Labels = map[string]string{v1alpha1.LabelBlueprintKind: bk.Kind, v1alpha1.LabelBlueprintName: obj.GetName()}
	// The blueprint owns its revisions: they go with it, and the reference's uid tells its
	// revisions from those of an earlier blueprint of the same name (trustedContent).
	rev.OwnerReferences = []metav1.OwnerReference{{
		APIVersion: v1alpha1.GroupVersion.String(), Kind: bk.Kind, Name: obj.GetName(), UID: obj.GetUID(),
	}}
	return rev, nil
}

// ensureRevision creates rev, the revision of blueprint object obj of kind bk, unless it
// exists. An object that already has rev's name is used only when it is a revision of obj
// holding rev's content (verifyRevision): the name is predictable from the blueprint's spec,
// so anyone who may create revisions could have made one with other templates in it first.
// Such an object is not adopted; the error says why (an *untrustedRevisionError).
func ensureRevision(ctx context.Context, c client.Client, bk *v1alpha1.BlueprintKind, obj client.Object, rev *v1alpha1.BlueprintRevision) error {
	existing := &v1alpha1.BlueprintRevision{}
	err := c.Get(ctx, client.ObjectKeyFromObject(rev), existing)
	if err == nil {
		return sameRevision(bk, obj, rev, existing)
	}
	if !apierrors.IsNotFound(err) {
		return fmt.Errorf("reading revision %s: %w", rev.Name, err)
	}
	err = c.Create(ctx, rev)
	if apierrors.IsAlreadyExists(err) {
		// Made since the read above, by another decision of this blueprint or by someone
		// else: the API server's copy is checked like any other.
		if err := c.Get(ctx, client.ObjectKeyFromObject(rev), existing); err != nil {
			return fmt.Errorf("reading revision %s: %w", rev.Name, err)
		}
		return sameRevision(bk, obj, rev, existing)
	}
	if err != nil {
		return fmt.Errorf("creating revision %s: %w", rev.Name, err)
	}
	return nil
}

// sameRevision checks that existing, an object with rev's name, is rev: a trusted revision of
// blueprint object obj with rev's full hash (the name holds only its first digits).
func sameRevision(bk *v1alpha1.BlueprintKind, obj client.Object, rev, existing *v1alpha1.BlueprintRevision) error {
	if _, _, err := trustedContent(bk, obj.GetName(), obj.GetUID(), existing); err != nil {
		return err
	}
	if existing.Spec.Hash != rev.Spec.Hash {
		return &untrustedRevisionError{revision: existing.Name, kind: bk.Kind, blueprint: obj.GetName(),
			why: fmt.Sprintf("it holds content of hash %s, not %s", existing.Spec.Hash, rev.Spec.Hash)}
	}
	return nil
}

// untrustedRevisionError says why a revision is not trusted for a blueprint (DESIGN §12):
// whoever may write an owner's status can name any revision there, and whoever may create
// revisions can make one with any name, so a revision stamps nothing unless it belongs to the
// blueprint and its content is what its name and hash say.
type untrustedRevisionError struct {
	revision, kind, blueprint string
	// why is what failed, in words for the owner's condition.
	why string
}

func (e *untrustedRevisionError) Error() string {
	return fmt.Sprintf("revision [%s] is not a trusted revision of %s [%s]: %s", e.revision, e.kind, e.blueprint, e.why)
}

// trustedContent decodes what revision rev holds, for blueprint name of kind bk whose object
// has uid: the blueprint object with the revision's spec and the templates. It fails with an
// *untrustedRevisionError unless the revision belongs to that blueprint (its spec, labels and
// owner reference name it, the owner reference with uid) and the content, hashed again as
// newRevision hashes it, gives the revision's hash and name. The objects returned are those
// that were hashed, so what is stamped is what was checked.
func trustedContent(bk *v1alpha1.BlueprintKind, name string, uid types.UID, rev *v1alpha1.BlueprintRevision) (v1alpha1.Blueprint, []v1alpha1.Template, error) {
	untrusted := func(format string, args ...any) error {
		return &untrustedRevisionError{revision: rev.Name, kind: bk.Kind, blueprint: name, why: fmt.Sprintf(format, args...)}
	}
	if b := rev.Spec.Blueprint; b.Kind != bk.Kind || b.Name != name {
		return nil, nil, untrusted("it is a revision of %s [%s]", b.Kind, b.Name)
	}
	if l := rev.Labels; l[v1alpha1.LabelBlueprintKind] != bk.Kind || l[v1alpha1.LabelBlueprintName] != name {
		return nil, nil, untrusted("its labels name %s [%s]", l[v1alpha1.LabelBlueprintKind], l[v1alpha1.LabelBlueprintName])
	}
	if !ownedBy(rev, bk.Kind, name, uid) {
		return nil, nil, untrusted("it is not owned by this %s (uid %s)", bk.Kind, uid)
	}
	obj := bk.NewBlueprint()
	obj.SetName(name)
	if err := obj.SetSpec(rev.Spec.BlueprintSpec.Raw); err != nil {
		return nil, nil, untrusted("its blueprint spec cannot be read: %v", err)
	}
	var templates []v1alpha1.Template
	for _, t := range rev.Spec.Templates {
		tpl, err := render.NewTemplate(t.Kind)
		if err != nil {
			return nil, nil, untrusted("%v", err)
		}
		doc, err := json.Marshal(map[string]any{"metadata": map[string]any{"name": t.Name}, "spec": t.Spec})
		if err == nil {
			err = json.Unmarshal(doc, tpl)
		}
		if err != nil {
			return nil, nil, untrusted("template %s/%s cannot be read: %v", t.Kind, t.Name, err)
		}
		templates = append(templates, tpl)
	}
	want, err := newRevision(bk, obj, templates)
	if err != nil {
		return nil, nil, untrusted("its content cannot be hashed: %v", err)
	}
	if want.Spec.Hash != rev.Spec.Hash || want.Name != rev.Name {
		return nil, nil, untrusted("its content hashes to %s, which does not match its hash and name", want.Spec.Hash)
	}
	return obj, templates, nil
}

// ownedBy says whether rev has an owner reference to the blueprint kind/name, with uid
// unless uid is empty (a blueprint read without one, as the offline renderer does).
func ownedBy(rev *v1alpha1.BlueprintRevision, kind, name string, uid types.UID) bool {
	for _, ref := range rev.OwnerReferences {
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err == nil && gv.Group == v1alpha1.GroupVersion.Group && ref.Kind == kind && ref.Name == name && (uid == "" || ref.UID == uid) {
			return true
		}
	}
	return false
}

// blueprintAt is the blueprint as revision rev holds it, with the live blueprint's identity
// and status. A revision that is not the live blueprint's (trustedContent) gives an
// *untrustedRevisionError and no blueprint.
func blueprintAt(bk *v1alpha1.BlueprintKind, live *render.Blueprint, rev *v1alpha1.BlueprintRevision) (*render.Blueprint, error) {
	obj, templates, err := trustedContent(bk, live.Name, live.UID, rev)
	if err != nil {
		return nil, err
	}
	bp := render.BlueprintOf(obj)
	bp.UID, bp.Generation, bp.Status, bp.Strategy = live.UID, live.Generation, live.Status, live.Strategy
	bp.Revision = rev.Name
	bp.Templates = map[render.TemplateRef]v1alpha1.Template{}
	for _, tpl := range templates {
		bp.Templates[render.TemplateRef{Kind: v1alpha1.TemplateKindOf(tpl).Kind, Name: tpl.GetName()}] = tpl
	}
	return bp, nil
}

// template reads the template kind/name the realization stamps from: the one its blueprint's
// revision holds, or the template as it is now. A template the revision does not hold is not
// found.
func (rz *realization) template(kind, name string) (v1alpha1.Template, error) {
	if rz.bp.Templates != nil {
		if tpl, ok := rz.bp.Templates[render.TemplateRef{Kind: kind, Name: name}]; ok {
			return tpl.DeepCopyObject().(v1alpha1.Template), nil
		}
		if _, err := render.NewTemplate(kind); err != nil {
			return nil, err
		}
		return nil, apierrors.NewNotFound(v1alpha1.Resource("templates"), name)
	}
	tpl, err := render.NewTemplate(kind)
	if err != nil {
		return nil, err
	}
	return tpl, rz.r.client.Get(rz.ctx, client.ObjectKey{Name: name}, tpl)
}
