package render

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/render/selector"
)

// Blueprint is a ClusterSupplyChain or a ClusterDelivery as the pipeline reads it.
type Blueprint struct {
	Kind *v1alpha1.BlueprintKind
	Name string
	// UID is the blueprint object's: its revisions carry it in their owner reference, so a
	// revision of an earlier blueprint of the same name is not mistaken for one of this one.
	UID               types.UID
	Generation        int64
	Status            *v1alpha1.BlueprintStatus
	Selector          v1alpha1.OwnerSelector
	Params            []v1alpha1.BlueprintParam
	ServiceAccountRef *v1alpha1.ServiceAccountRef
	Resources         []v1alpha1.BlueprintResource
	// Strategy is the blueprint's rolloutStrategy, nil without one.
	Strategy *v1alpha1.RolloutStrategy
	// Revision is the revision the blueprint was read from, and Templates the templates
	// it holds; both are empty for a blueprint read as it is now.
	Revision  string
	Templates map[TemplateRef]v1alpha1.Template
}

// BlueprintOf views a blueprint object as a Blueprint.
func BlueprintOf(obj v1alpha1.Blueprint) *Blueprint {
	return &Blueprint{
		Kind: v1alpha1.BlueprintKindOf(obj), Name: obj.GetName(), UID: obj.GetUID(), Generation: obj.GetGeneration(),
		Status: obj.GetBlueprintStatus(), Selector: obj.GetOwnerSelector(), Params: obj.GetParams(),
		ServiceAccountRef: obj.GetServiceAccountRef(), Strategy: obj.GetRolloutStrategy(), Resources: obj.GetResources(),
	}
}

// BlueprintsOf views every item of a list of blueprints as a Blueprint.
func BlueprintsOf(list v1alpha1.ObjectList) []*Blueprint {
	var out []*Blueprint
	_ = meta.EachListItem(list, func(o runtime.Object) error {
		out = append(out, BlueprintOf(o.(v1alpha1.Blueprint)))
		return nil
	})
	return out
}

// TemplateRef is one template a blueprint references, directly or as an option.
type TemplateRef struct{ Kind, Name string }

// String is the reference as kind/name, as messages quote it.
func (t TemplateRef) String() string { return t.Kind + "/" + t.Name }

// ResourceTemplate is a template a blueprint's resource references.
type ResourceTemplate struct {
	Resource string
	Template TemplateRef
}

// TemplateRefs are the templates the blueprint references, directly or as options, in
// spec order, each with the resource that references it.
func (bp *Blueprint) TemplateRefs() []ResourceTemplate {
	var refs []ResourceTemplate
	for _, res := range bp.Resources {
		if res.TemplateRef.Name != "" {
			refs = append(refs, ResourceTemplate{res.Name, TemplateRef{res.TemplateRef.Kind, res.TemplateRef.Name}})
		}
		for _, opt := range res.TemplateRef.Options {
			if opt.Name != "" {
				refs = append(refs, ResourceTemplate{res.Name, TemplateRef{res.TemplateRef.Kind, opt.Name}})
			}
		}
	}
	return refs
}

// TemplatesOf reads the templates a blueprint references with get, and names the resources
// whose template is missing. An error other than a missing template is returned.
func TemplatesOf(bp *Blueprint, get func(TemplateRef) (v1alpha1.Template, error)) (templates []v1alpha1.Template, missing []string, err error) {
	seen := map[TemplateRef]bool{}
	for _, ref := range bp.TemplateRefs() {
		if slices.Contains(missing, ref.Resource) || seen[ref.Template] {
			continue
		}
		tpl, err := get(ref.Template)
		if err != nil {
			if !apierrors.IsNotFound(err) && !errors.Is(err, ErrUnknownTemplateKind) {
				return nil, nil, err
			}
			missing = append(missing, ref.Resource)
			continue
		}
		seen[ref.Template] = true
		templates = append(templates, tpl)
	}
	return templates, missing, nil
}

// BlueprintConditions is TemplatesReady and Ready, given the resources whose template is
// missing, named in Cartographer's words.
func BlueprintConditions(missing []string, generation int64) []metav1.Condition {
	ready := metav1.Condition{
		Type: v1alpha1.ConditionTemplatesReady, Status: metav1.ConditionTrue,
		Reason: v1alpha1.ReasonReady, ObservedGeneration: generation,
	}
	if len(missing) > 0 {
		ready.Status, ready.Reason = metav1.ConditionFalse, v1alpha1.ReasonTemplatesNotFound
		ready.Message = fmt.Sprintf("did not find the template of the resource(s) [%s]", strings.Join(missing, ", "))
	}
	top := ready
	top.Type = v1alpha1.ConditionReady
	return []metav1.Condition{ready, top}
}

// SelectBlueprint picks the owner's blueprint and says so as the kind's blueprint
// condition (SupplyChainReady or DeliveryReady): True Ready, the selection failure, or
// the chosen blueprint's own not-Ready reason.
func SelectBlueprint(owner *Owner, blueprints []*Blueprint) (*Blueprint, metav1.Condition) {
	kind := owner.Kind
	candidates := make([]selector.Candidate, len(blueprints))
	for i, bp := range blueprints {
		candidates[i] = selector.Candidate{Name: bp.Name, Selector: bp.Selector}
	}
	sel := selector.Select(kind.Terms, selector.NewOwner(owner.Fields), candidates)
	cond := metav1.Condition{Type: kind.BlueprintReady, Status: metav1.ConditionFalse, Reason: sel.Reason, Message: sel.Message}
	if sel.Reason == kind.Terms.NotFound && len(sel.Errors) > 0 {
		// A blueprint whose selector cannot be evaluated was skipped; it may be the one
		// meant for this owner, so say which and why.
		msgs := make([]string, len(sel.Errors))
		for i, err := range sel.Errors {
			msgs[i] = err.Error()
		}
		cond.Message += fmt.Sprintf("; skipped %s with invalid selectors: %s", kind.Terms.Blueprints, strings.Join(msgs, "; "))
	}
	i := slices.IndexFunc(blueprints, func(bp *Blueprint) bool { return bp.Name == sel.Name })
	if sel.Name == "" || i < 0 {
		return nil, cond
	}
	bp := blueprints[i]
	// A blueprint whose status is stale (a newer spec not yet checked) or not Ready
	// lends its reason; realizing waits until its templates are there.
	ready := meta.FindStatusCondition(bp.Status.Conditions, v1alpha1.ConditionReady)
	switch {
	case ready == nil || bp.Status.ObservedGeneration != bp.Generation:
		cond.Status, cond.Reason = metav1.ConditionUnknown, kind.Blueprint.NotReconciled
		cond.Message = fmt.Sprintf("waiting for %s [%s] to be reconciled", kind.Terms.Blueprint, bp.Name)
	case ready.Status != metav1.ConditionTrue:
		cond.Status, cond.Reason, cond.Message = ready.Status, ready.Reason, ready.Message
	default:
		cond.Status, cond.Reason, cond.Message = metav1.ConditionTrue, v1alpha1.ReasonReady, ""
	}
	return bp, cond
}

// Owner is an owner as the pipeline reads it.
type Owner struct {
	Kind   *v1alpha1.OwnerKind
	Object v1alpha1.Owner
	// Fields are the owner as the map that $(workload.…)$ paths and selectors read.
	Fields map[string]any
}

// NewOwner reads an owner for the pipeline. It fails only for an object that is no owner
// or cannot be converted.
func NewOwner(obj v1alpha1.Owner) (*Owner, error) {
	kind := v1alpha1.OwnerKindOf(obj)
	if kind == nil {
		return nil, fmt.Errorf("a %T has no blueprint: only Workloads and Deliverables do", obj)
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("converting %s: %w", kind.Kind, err)
	}
	m["apiVersion"] = v1alpha1.GroupVersion.String()
	m["kind"] = kind.Kind
	return &Owner{Kind: kind, Object: obj, Fields: m}, nil
}

// ServiceAccount is the identity the owner's objects are stamped as: the owner's own
// ServiceAccount, else the blueprint's, else the namespace's default.
func ServiceAccount(owner v1alpha1.Owner, bp *Blueprint) (namespace, name string) {
	switch {
	case owner.GetServiceAccountName() != "":
		return owner.GetNamespace(), owner.GetServiceAccountName()
	case bp.ServiceAccountRef != nil && bp.ServiceAccountRef.Name != "":
		if ns := bp.ServiceAccountRef.Namespace; ns != "" {
			return ns, bp.ServiceAccountRef.Name
		}
		return owner.GetNamespace(), bp.ServiceAccountRef.Name
	}
	return owner.GetNamespace(), "default"
}

// WithGeneration is c observed at generation.
func WithGeneration(c metav1.Condition, generation int64) metav1.Condition {
	c.ObservedGeneration = generation
	return c
}
