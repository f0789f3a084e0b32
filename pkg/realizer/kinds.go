package realizer

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/realizer/selector"
	"github.com/surveyor-dev/surveyor/pkg/realizer/stamp"
)

// ownerKind describes an owner kind to the one owner reconciler. Everything that differs
// between Workloads and Deliverables is here, and nowhere else on the realizing path.
type ownerKind struct {
	// kind is the owner's kind, e.g. Workload; it is the stamped objects' owner reference.
	kind string
	// name names the owner kind in controller names and messages, e.g. "workload".
	name      string
	newObject func() v1alpha1.Owner
	newList   func() client.ObjectList
	// blueprint is the kind of blueprint that realizes this owner kind.
	blueprint *blueprintKind
	// terms are the words and reasons of blueprint selection.
	terms selector.Terms
	// contextKeys are the keys the owner goes by in a template's context; the first is its own.
	contextKeys []string
	// labels are the keys of the labels naming the owner and its blueprint on stamped objects.
	labels ownerLabels
	// blueprintReady is the owner condition reporting its blueprint, e.g. SupplyChainReady.
	blueprintReady string
	// completeReason is ResourceSubmitted's reason for a resource the owner completed without.
	completeReason string
}

// ownerLabels are the label keys naming an owner and its blueprint on a stamped object.
type ownerLabels struct {
	name, namespace, blueprint string
}

// blueprintKind describes a blueprint kind (ClusterSupplyChain or ClusterDelivery) to the
// blueprint reconciler and the owner reconciler.
type blueprintKind struct {
	// kind is the blueprint's kind, e.g. ClusterSupplyChain.
	kind string
	// notReconciled is the blueprint condition's reason while the blueprint's status lags its spec.
	notReconciled string
	newObject     func() client.Object
	newList       func() client.ObjectList
	// of views a blueprint object of this kind as a blueprint.
	of func(client.Object) *blueprint
	// withSpec makes a blueprint object of this kind named name with the spec in raw JSON,
	// as a revision holds it.
	withSpec func(name string, raw []byte) (client.Object, error)
	// specOf is a blueprint object's spec without its rolloutStrategy: what a revision holds.
	specOf func(client.Object) any
}

// items views every item of a list of this kind as a blueprint.
func (k *blueprintKind) items(list client.ObjectList) []*blueprint {
	var out []*blueprint
	_ = meta.EachListItem(list, func(o runtime.Object) error {
		out = append(out, k.of(o.(client.Object)))
		return nil
	})
	return out
}

var workloadKind = &ownerKind{
	kind:           v1alpha1.KindWorkload,
	name:           "workload",
	newObject:      func() v1alpha1.Owner { return &v1alpha1.Workload{} },
	newList:        func() client.ObjectList { return &v1alpha1.WorkloadList{} },
	blueprint:      supplyChainKind,
	terms:          selector.WorkloadTerms,
	contextKeys:    []string{stamp.OwnerWorkload},
	labels:         ownerLabels{v1alpha1.LabelWorkloadName, v1alpha1.LabelWorkloadNamespace, v1alpha1.LabelSupplyChainName},
	blueprintReady: v1alpha1.ConditionSupplyChainReady,
	completeReason: v1alpha1.ReasonWorkloadComplete,
}

var deliverableKind = &ownerKind{
	kind:      v1alpha1.KindDeliverable,
	name:      "deliverable",
	newObject: func() v1alpha1.Owner { return &v1alpha1.Deliverable{} },
	newList:   func() client.ObjectList { return &v1alpha1.DeliverableList{} },
	blueprint: deliveryKind,
	terms:     selector.DeliverableTerms,
	// Templates shared with supply chains read the owner as workload.
	contextKeys:    []string{stamp.OwnerDeliverable, stamp.OwnerWorkload},
	labels:         ownerLabels{v1alpha1.LabelDeliverableName, v1alpha1.LabelDeliverableNamespace, v1alpha1.LabelDeliveryName},
	blueprintReady: v1alpha1.ConditionDeliveryReady,
	completeReason: v1alpha1.ReasonDeliverableComplete,
}

// ownerKinds are every owner kind, each realized by its own instance of the one reconciler.
var ownerKinds = []*ownerKind{workloadKind, deliverableKind}

var supplyChainKind = &blueprintKind{
	kind:          v1alpha1.KindClusterSupplyChain,
	notReconciled: v1alpha1.ReasonSupplyChainNotReconciled,
	newObject:     func() client.Object { return &v1alpha1.ClusterSupplyChain{} },
	newList:       func() client.ObjectList { return &v1alpha1.ClusterSupplyChainList{} },
	of:            func(o client.Object) *blueprint { return supplyChainBlueprint(o.(*v1alpha1.ClusterSupplyChain)) },
	withSpec: func(name string, raw []byte) (client.Object, error) {
		sc := &v1alpha1.ClusterSupplyChain{ObjectMeta: metav1.ObjectMeta{Name: name}}
		return sc, json.Unmarshal(raw, &sc.Spec)
	},
	specOf: func(o client.Object) any {
		spec := o.(*v1alpha1.ClusterSupplyChain).Spec
		spec.RolloutStrategy = nil
		return spec
	},
}

var deliveryKind = &blueprintKind{
	kind:          v1alpha1.KindClusterDelivery,
	notReconciled: v1alpha1.ReasonDeliveryNotReconciled,
	newObject:     func() client.Object { return &v1alpha1.ClusterDelivery{} },
	newList:       func() client.ObjectList { return &v1alpha1.ClusterDeliveryList{} },
	of:            func(o client.Object) *blueprint { return deliveryBlueprint(o.(*v1alpha1.ClusterDelivery)) },
	withSpec: func(name string, raw []byte) (client.Object, error) {
		d := &v1alpha1.ClusterDelivery{ObjectMeta: metav1.ObjectMeta{Name: name}}
		return d, json.Unmarshal(raw, &d.Spec)
	},
	specOf: func(o client.Object) any {
		spec := o.(*v1alpha1.ClusterDelivery).Spec
		spec.RolloutStrategy = nil
		return spec
	},
}

// blueprintKinds are every blueprint kind, each served by its own instance of the one
// blueprint reconciler.
var blueprintKinds = []*blueprintKind{supplyChainKind, deliveryKind}

// blueprint is a ClusterSupplyChain or a ClusterDelivery as the realizer reads it.
type blueprint struct {
	kind string
	name string
	// uid is the blueprint object's: its revisions carry it in their owner reference, so a
	// revision of an earlier blueprint of the same name is not mistaken for one of this one.
	uid               types.UID
	generation        int64
	status            *v1alpha1.BlueprintStatus
	selector          v1alpha1.OwnerSelector
	params            []v1alpha1.BlueprintParam
	serviceAccountRef *v1alpha1.ServiceAccountRef
	resources         []resourceSpec
	// strategy is the blueprint's rolloutStrategy, nil without one.
	strategy *v1alpha1.RolloutStrategy
	// revision is the revision the blueprint was read from, and templates the templates
	// it holds; both are empty for a blueprint read as it is now.
	revision  string
	templates map[templateRef]client.Object
}

// resourceSpec is one resource of a blueprint, whichever kind of blueprint declared it.
type resourceSpec struct {
	name         string
	templateKind string
	templateName string // empty when options choose the template
	options      []v1alpha1.TemplateOption
	params       []v1alpha1.BlueprintParam
	sources      []v1alpha1.ResourceReference
	images       []v1alpha1.ResourceReference
	deployment   *v1alpha1.DeploymentReference
	configs      []v1alpha1.ResourceReference
}

func supplyChainBlueprint(sc *v1alpha1.ClusterSupplyChain) *blueprint {
	bp := &blueprint{
		kind: v1alpha1.KindClusterSupplyChain, name: sc.Name, uid: sc.UID, generation: sc.Generation, status: &sc.Status,
		selector: sc.Spec.OwnerSelector, params: sc.Spec.Params, serviceAccountRef: sc.Spec.ServiceAccountRef,
		strategy: sc.Spec.RolloutStrategy,
	}

	for _, r := range sc.Spec.Resources {
		bp.resources = append(bp.resources, resourceSpec{
			name: r.Name, templateKind: r.TemplateRef.Kind, templateName: r.TemplateRef.Name, options: r.TemplateRef.Options,
			params: r.Params, sources: r.Sources, images: r.Images, configs: r.Configs,
		})
	}
	return bp
}

func deliveryBlueprint(d *v1alpha1.ClusterDelivery) *blueprint {
	bp := &blueprint{
		kind: v1alpha1.KindClusterDelivery, name: d.Name, uid: d.UID, generation: d.Generation, status: &d.Status,
		selector: d.Spec.OwnerSelector, params: d.Spec.Params, serviceAccountRef: d.Spec.ServiceAccountRef,
		strategy: d.Spec.RolloutStrategy,
	}

	for _, r := range d.Spec.Resources {
		bp.resources = append(bp.resources, resourceSpec{
			name: r.Name, templateKind: r.TemplateRef.Kind, templateName: r.TemplateRef.Name, options: r.TemplateRef.Options,
			params: r.Params, sources: r.Sources, deployment: r.Deployment, configs: r.Configs,
		})
	}
	return bp
}

// templateRefs are the templates the blueprint references, directly or as options, in
// spec order, each with the resource that references it.
func (bp *blueprint) templateRefs() []resourceTemplate {
	var refs []resourceTemplate
	for _, res := range bp.resources {
		if res.templateName != "" {
			refs = append(refs, resourceTemplate{res.name, templateRef{res.templateKind, res.templateName}})
		}
		for _, opt := range res.options {
			if opt.Name != "" {
				refs = append(refs, resourceTemplate{res.name, templateRef{res.templateKind, opt.Name}})
			}
		}
	}
	return refs
}

// resourceTemplate is a template a blueprint's resource references.
type resourceTemplate struct {
	resource string
	template templateRef
}

// templateRef is one template a blueprint references, directly or as an option.
type templateRef struct{ kind, name string }

func (t templateRef) String() string { return t.kind + "/" + t.name }
