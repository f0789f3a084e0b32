package v1alpha1

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// The one table of kinds (DESIGN §1). The controller, the CLI and the web view read what
// differs between kinds from here; adding a kind touches this table and its types.

// Object is an object of any kind of this group (the shape of controller-runtime's
// client.Object).
//
// +kubebuilder:object:generate=false
type Object interface {
	metav1.Object
	runtime.Object
}

// ObjectList is a list of any kind of this group (the shape of client.ObjectList).
//
// +kubebuilder:object:generate=false
type ObjectList interface {
	metav1.ListInterface
	runtime.Object
}

// KindInfo is what every kind of the table has: how the API server and users name it, and how
// to make one.
//
// +kubebuilder:object:generate=false
type KindInfo struct {
	// Kind is the kind, e.g. Workload.
	Kind string
	// Resource is its plural resource, e.g. workloads.
	Resource string
	// Namespaced kinds live in a namespace; the others are cluster-scoped.
	Namespaced bool
	// Names are what users may call it on the command line: singular, plural, short name
	// and any alias.
	Names []string
	// New makes an empty object of the kind, NewList an empty list.
	New     func() Object
	NewList func() ObjectList
}

// Singular is the kind's name in lower case, as messages and controller names say it.
func (k *KindInfo) Singular() string { return k.Names[0] }

// Items are the objects of a list of the kind.
func Items(list ObjectList) []Object {
	var out []Object
	_ = meta.EachListItem(list, func(o runtime.Object) error {
		out = append(out, o.(Object))
		return nil
	})
	return out
}

// OwnerKind is a kind of owner (Workload, Deliverable): what differs between owner kinds
// on the realizing path.
//
// +kubebuilder:object:generate=false
type OwnerKind struct {
	KindInfo
	// Blueprint is the kind of blueprint that realizes this owner kind.
	Blueprint *BlueprintKind
	// BlueprintReady is the owner condition reporting its blueprint, e.g. SupplyChainReady.
	BlueprintReady string
	// CompleteReason is ResourceSubmitted's reason for a resource the owner completed without.
	CompleteReason string
	// ContextKeys are the keys the owner goes by in a template's context; the first is its own.
	ContextKeys []string
	// Labels are the keys of the labels naming the owner and its blueprint on stamped objects.
	Labels OwnerLabels
	// Terms are the words and reasons of blueprint selection.
	Terms SelectionTerms
}

// ConditionTypes are the conditions every owner of the kind has, in order.
func (k *OwnerKind) ConditionTypes() []string {
	return []string{k.BlueprintReady, ConditionResourcesSubmitted, ConditionResourcesHealthy, ConditionReady, ConditionAvailable}
}

// NewOwner makes an empty owner of the kind.
func (k *OwnerKind) NewOwner() Owner { return k.New().(Owner) }

// OwnerLabels are the label keys naming an owner and its blueprint on a stamped object.
//
// +kubebuilder:object:generate=false
type OwnerLabels struct {
	Name, Namespace, Blueprint string
}

// SelectionTerms are the words and reasons blueprint selection reports for one kind of owner.
//
// +kubebuilder:object:generate=false
type SelectionTerms struct {
	// Owner names the owner kind in messages, e.g. "workload".
	Owner string
	// Blueprint names the blueprint kind in messages, e.g. "supply chain".
	Blueprint string
	// Blueprints is Blueprint's plural, e.g. "supply chains".
	Blueprints string
	// LabelsMissing is the reason when the owner has no labels, e.g. WorkloadLabelsMissing.
	LabelsMissing string
	// NotFound is the reason when no blueprint selects the owner, e.g. SupplyChainNotFound.
	NotFound string
	// MultipleMatches is the reason when several blueprints tie, e.g. MultipleSupplyChainMatches.
	MultipleMatches string
}

// BlueprintKind is a kind of blueprint (ClusterSupplyChain, ClusterDelivery).
//
// +kubebuilder:object:generate=false
type BlueprintKind struct {
	KindInfo
	// NotReconciled is the owner's blueprint condition's reason while the blueprint's status
	// lags its spec.
	NotReconciled string
}

// Owner is the kind of owner blueprints of the kind realize.
func (k *BlueprintKind) Owner() *OwnerKind {
	for _, o := range OwnerKinds {
		if o.Blueprint == k {
			return o
		}
	}
	return nil
}

// NewBlueprint makes an empty blueprint of the kind.
func (k *BlueprintKind) NewBlueprint() Blueprint { return k.New().(Blueprint) }

// Blueprint is a ClusterSupplyChain or a ClusterDelivery.
//
// +kubebuilder:object:generate=false
type Blueprint interface {
	Object
	GetOwnerSelector() OwnerSelector
	GetParams() []BlueprintParam
	GetServiceAccountRef() *ServiceAccountRef
	GetRolloutStrategy() *RolloutStrategy
	GetBlueprintStatus() *BlueprintStatus
	// GetResources are the blueprint's resources, in order, whatever its kind calls them.
	GetResources() []BlueprintResource
	// SpecWithoutRollout is the spec without its rolloutStrategy: what a revision holds.
	SpecWithoutRollout() any
	// SetSpec sets the spec from JSON, as a revision holds it.
	SetSpec(raw []byte) error
}

// BlueprintResource is one resource of a blueprint, whichever kind of blueprint declared it.
//
// +kubebuilder:object:generate=false
type BlueprintResource struct {
	Name        string
	TemplateRef BlueprintTemplateReference
	Params      []BlueprintParam
	Sources     []ResourceReference
	Images      []ResourceReference
	Deployment  *DeploymentReference
	Configs     []ResourceReference
}

// BlueprintTemplateReference is a resource's templateRef, whichever kind of blueprint declared it.
//
// +kubebuilder:object:generate=false
type BlueprintTemplateReference struct {
	Kind    string
	Name    string
	Options []TemplateOption
}

// TemplateKind is a kind of template a blueprint's resource may reference.
//
// +kubebuilder:object:generate=false
type TemplateKind struct {
	KindInfo
}

// NewTemplate makes an empty template of the kind.
func (k *TemplateKind) NewTemplate() Template { return k.New().(Template) }

// Template is any template kind.
//
// +kubebuilder:object:generate=false
type Template interface {
	Object
	GetTemplateSpec() *TemplateSpec
	GetTemplateStatus() *TemplateStatus
	// GetOutputPaths are the jsonpaths of the outputs the template declares, by output name
	// (url, revision, image, config), in order.
	GetOutputPaths() []OutputPath
}

// OutputPath is an output a template declares and the jsonpath it is read from.
//
// +kubebuilder:object:generate=false
type OutputPath struct {
	Name string
	Path string
}

// Output names.
const (
	OutputURL      = "url"
	OutputRevision = "revision"
	OutputImage    = "image"
	OutputConfig   = "config"
)

var (
	// Workloads are realized through ClusterSupplyChains.
	Workloads = &OwnerKind{
		KindInfo: KindInfo{
			Kind: KindWorkload, Resource: "workloads", Namespaced: true, Names: []string{"workload", "workloads", "wld"},
			New: func() Object { return &Workload{} }, NewList: func() ObjectList { return &WorkloadList{} },
		},
		Blueprint:      SupplyChains,
		BlueprintReady: ConditionSupplyChainReady,
		CompleteReason: ReasonWorkloadComplete,
		ContextKeys:    []string{"workload", "deliverable"},
		Labels:         OwnerLabels{LabelWorkloadName, LabelWorkloadNamespace, LabelSupplyChainName},
		Terms: SelectionTerms{
			Owner: "workload", Blueprint: "supply chain", Blueprints: "supply chains",
			LabelsMissing: ReasonWorkloadLabelsMissing, NotFound: ReasonSupplyChainNotFound, MultipleMatches: ReasonMultipleSupplyChainMatches,
		},
	}
	// Deliverables are realized through ClusterDeliveries.
	Deliverables = &OwnerKind{
		KindInfo: KindInfo{
			Kind: KindDeliverable, Resource: "deliverables", Namespaced: true, Names: []string{"deliverable", "deliverables", "dlv"},
			New: func() Object { return &Deliverable{} }, NewList: func() ObjectList { return &DeliverableList{} },
		},
		Blueprint:      Deliveries,
		BlueprintReady: ConditionDeliveryReady,
		CompleteReason: ReasonDeliverableComplete,
		// Templates shared with supply chains read the owner as workload.
		ContextKeys: []string{"deliverable", "workload"},
		Labels:      OwnerLabels{LabelDeliverableName, LabelDeliverableNamespace, LabelDeliveryName},
		Terms: SelectionTerms{
			Owner: "deliverable", Blueprint: "delivery", Blueprints: "deliveries",
			LabelsMissing: ReasonDeliverableLabelsMissing, NotFound: ReasonDeliveryNotFound, MultipleMatches: ReasonMultipleDeliveryMatches,
		},
	}
	// OwnerKinds are every owner kind.
	OwnerKinds = []*OwnerKind{Workloads, Deliverables}

	// SupplyChains realize Workloads.
	SupplyChains = &BlueprintKind{
		KindInfo: KindInfo{
			Kind: KindClusterSupplyChain, Resource: "clustersupplychains", Names: []string{"clustersupplychain", "clustersupplychains", "csc", "supplychain"},
			New: func() Object { return &ClusterSupplyChain{} }, NewList: func() ObjectList { return &ClusterSupplyChainList{} },
		},
		NotReconciled: ReasonSupplyChainNotReconciled,
	}
	// Deliveries realize Deliverables.
	Deliveries = &BlueprintKind{
		KindInfo: KindInfo{
			Kind: KindClusterDelivery, Resource: "clusterdeliveries", Names: []string{"clusterdelivery", "clusterdeliveries", "cd", "delivery"},
			New: func() Object { return &ClusterDelivery{} }, NewList: func() ObjectList { return &ClusterDeliveryList{} },
		},
		NotReconciled: ReasonDeliveryNotReconciled,
	}
	// BlueprintKinds are every blueprint kind.
	BlueprintKinds = []*BlueprintKind{SupplyChains, Deliveries}

	// TemplateKinds are every template kind.
	TemplateKinds = []*TemplateKind{
		{KindInfo{
			Kind: KindClusterSourceTemplate, Resource: "clustersourcetemplates", Names: []string{"clustersourcetemplate", "clustersourcetemplates", "cst"},
			New: func() Object { return &ClusterSourceTemplate{} }, NewList: func() ObjectList { return &ClusterSourceTemplateList{} },
		}},
		{KindInfo{
			Kind: KindClusterImageTemplate, Resource: "clusterimagetemplates", Names: []string{"clusterimagetemplate", "clusterimagetemplates", "cit"},
			New: func() Object { return &ClusterImageTemplate{} }, NewList: func() ObjectList { return &ClusterImageTemplateList{} },
		}},
		{KindInfo{
			Kind: KindClusterConfigTemplate, Resource: "clusterconfigtemplates", Names: []string{"clusterconfigtemplate", "clusterconfigtemplates", "cct"},
			New: func() Object { return &ClusterConfigTemplate{} }, NewList: func() ObjectList { return &ClusterConfigTemplateList{} },
		}},
		{KindInfo{
			Kind: KindClusterDeploymentTemplate, Resource: "clusterdeploymenttemplates", Names: []string{"clusterdeploymenttemplate", "clusterdeploymenttemplates", "cdt"},
			New: func() Object { return &ClusterDeploymentTemplate{} }, NewList: func() ObjectList { return &ClusterDeploymentTemplateList{} },
		}},
		{KindInfo{
			Kind: KindClusterTemplate, Resource: "clustertemplates", Names: []string{"clustertemplate", "clustertemplates", "ct"},
			New: func() Object { return &ClusterTemplate{} }, NewList: func() ObjectList { return &ClusterTemplateList{} },
		}},
	}
)

// Runnables and their ClusterRunTemplates (DESIGN §11): a Runnable stamps runs itself, it
// is neither an owner of blueprints nor a blueprint.
var (
	// Runnables stamp runs from ClusterRunTemplates.
	Runnables = &KindInfo{
		Kind: KindRunnable, Resource: "runnables", Namespaced: true, Names: []string{"runnable", "runnables", "run"},
		New: func() Object { return &Runnable{} }, NewList: func() ObjectList { return &RunnableList{} },
	}
	// RunTemplates are what Runnables stamp.
	RunTemplates = &KindInfo{
		Kind: KindClusterRunTemplate, Resource: "clusterruntemplates", Names: []string{"clusterruntemplate", "clusterruntemplates", "crt"},
		New: func() Object { return &ClusterRunTemplate{} }, NewList: func() ObjectList { return &ClusterRunTemplateList{} },
	}
)

// OwnerKindOf is the table's entry of an owner object, nil for anything else.
func OwnerKindOf(obj runtime.Object) *OwnerKind {
	switch obj.(type) {
	case *Workload:
		return Workloads
	case *Deliverable:
		return Deliverables
	}
	return nil
}

// BlueprintKindOf is the table's entry of a blueprint object, nil for anything else.
func BlueprintKindOf(obj runtime.Object) *BlueprintKind {
	switch obj.(type) {
	case *ClusterSupplyChain:
		return SupplyChains
	case *ClusterDelivery:
		return Deliveries
	}
	return nil
}

// OwnerKindNamed is the table's owner kind named kind, nil when there is none.
func OwnerKindNamed(kind string) *OwnerKind {
	for _, k := range OwnerKinds {
		if k.Kind == kind {
			return k
		}
	}
	return nil
}

// TemplateKindOf is the table's entry of a template object, nil for anything else.
func TemplateKindOf(obj runtime.Object) *TemplateKind {
	switch obj.(type) {
	case *ClusterSourceTemplate:
		return TemplateKinds[0]
	case *ClusterImageTemplate:
		return TemplateKinds[1]
	case *ClusterConfigTemplate:
		return TemplateKinds[2]
	case *ClusterDeploymentTemplate:
		return TemplateKinds[3]
	case *ClusterTemplate:
		return TemplateKinds[4]
	}
	return nil
}

// TemplateKindNamed is the table's template kind named kind, nil when there is none.
func TemplateKindNamed(kind string) *TemplateKind {
	for _, k := range TemplateKinds {
		if k.Kind == kind {
			return k
		}
	}
	return nil
}

var (
	_ Blueprint = &ClusterSupplyChain{}
	_ Blueprint = &ClusterDelivery{}
	_ Template  = &ClusterSourceTemplate{}
	_ Template  = &ClusterImageTemplate{}
	_ Template  = &ClusterConfigTemplate{}
	_ Template  = &ClusterDeploymentTemplate{}
	_ Template  = &ClusterTemplate{}
)

// GetOwnerSelector is the blueprint's selector of owners.
func (sc *ClusterSupplyChain) GetOwnerSelector() OwnerSelector { return sc.Spec.OwnerSelector }

// GetParams are the params the blueprint passes to every template.
func (sc *ClusterSupplyChain) GetParams() []BlueprintParam { return sc.Spec.Params }

// GetServiceAccountRef is the identity that stamps for owners that name none.
func (sc *ClusterSupplyChain) GetServiceAccountRef() *ServiceAccountRef {
	return sc.Spec.ServiceAccountRef
}

// GetRolloutStrategy is the blueprint's rolloutStrategy, nil without one.
func (sc *ClusterSupplyChain) GetRolloutStrategy() *RolloutStrategy { return sc.Spec.RolloutStrategy }

// GetBlueprintStatus is the blueprint's status.
func (sc *ClusterSupplyChain) GetBlueprintStatus() *BlueprintStatus { return &sc.Status }

// SetSpec sets the spec from JSON, as a revision holds it.
func (sc *ClusterSupplyChain) SetSpec(raw []byte) error { return json.Unmarshal(raw, &sc.Spec) }

// SpecWithoutRollout is the spec without its rolloutStrategy: what a revision holds.
func (sc *ClusterSupplyChain) SpecWithoutRollout() any {
	s := sc.Spec
	s.RolloutStrategy = nil
	return s
}

// GetOwnerSelector is the blueprint's selector of owners.
func (d *ClusterDelivery) GetOwnerSelector() OwnerSelector { return d.Spec.OwnerSelector }

// GetParams are the params the blueprint passes to every template.
func (d *ClusterDelivery) GetParams() []BlueprintParam { return d.Spec.Params }

// GetServiceAccountRef is the identity that stamps for owners that name none.
func (d *ClusterDelivery) GetServiceAccountRef() *ServiceAccountRef { return d.Spec.ServiceAccountRef }

// GetRolloutStrategy is the blueprint's rolloutStrategy, nil without one.
func (d *ClusterDelivery) GetRolloutStrategy() *RolloutStrategy { return d.Spec.RolloutStrategy }

// GetBlueprintStatus is the blueprint's status.
func (d *ClusterDelivery) GetBlueprintStatus() *BlueprintStatus { return &d.Status }

// SetSpec sets the spec from JSON, as a revision holds it.
func (d *ClusterDelivery) SetSpec(raw []byte) error { return json.Unmarshal(raw, &d.Spec) }

// SpecWithoutRollout is the spec without its rolloutStrategy: what a revision holds.
func (d *ClusterDelivery) SpecWithoutRollout() any { s := d.Spec; s.RolloutStrategy = nil; return s }

// GetResources are the blueprint's resources, in order.
func (sc *ClusterSupplyChain) GetResources() []BlueprintResource {
	out := make([]BlueprintResource, len(sc.Spec.Resources))
	for i, r := range sc.Spec.Resources {
		out[i] = BlueprintResource{
			Name: r.Name, TemplateRef: BlueprintTemplateReference{r.TemplateRef.Kind, r.TemplateRef.Name, r.TemplateRef.Options},
			Params: r.Params, Sources: r.Sources, Images: r.Images, Configs: r.Configs,
		}
	}
	return out
}

// GetResources are the blueprint's resources, in order.
func (d *ClusterDelivery) GetResources() []BlueprintResource {
	out := make([]BlueprintResource, len(d.Spec.Resources))
	for i, r := range d.Spec.Resources {
		out[i] = BlueprintResource{
			Name: r.Name, TemplateRef: BlueprintTemplateReference{r.TemplateRef.Kind, r.TemplateRef.Name, r.TemplateRef.Options},
			Params: r.Params, Sources: r.Sources, Deployment: r.Deployment, Configs: r.Configs,
		}
	}
	return out
}

// GetTemplateSpec is the spec every template kind shares.
func (t *ClusterSourceTemplate) GetTemplateSpec() *TemplateSpec { return &t.Spec.TemplateSpec }

// GetTemplateStatus is the template's status.
func (t *ClusterSourceTemplate) GetTemplateStatus() *TemplateStatus { return &t.Status }

// GetTemplateSpec is the spec every template kind shares.
func (t *ClusterImageTemplate) GetTemplateSpec() *TemplateSpec { return &t.Spec.TemplateSpec }

// GetTemplateStatus is the template's status.
func (t *ClusterImageTemplate) GetTemplateStatus() *TemplateStatus { return &t.Status }

// GetTemplateSpec is the spec every template kind shares.
func (t *ClusterConfigTemplate) GetTemplateSpec() *TemplateSpec { return &t.Spec.TemplateSpec }

// GetTemplateStatus is the template's status.
func (t *ClusterConfigTemplate) GetTemplateStatus() *TemplateStatus { return &t.Status }

// GetTemplateSpec is the spec every template kind shares.
func (t *ClusterDeploymentTemplate) GetTemplateSpec() *TemplateSpec { return &t.Spec.TemplateSpec }

// GetTemplateStatus is the template's status.
func (t *ClusterDeploymentTemplate) GetTemplateStatus() *TemplateStatus { return &t.Status }

// GetTemplateSpec is the spec every template kind shares.
func (t *ClusterTemplate) GetTemplateSpec() *TemplateSpec { return &t.Spec }

// GetTemplateStatus is the template's status.
func (t *ClusterTemplate) GetTemplateStatus() *TemplateStatus { return &t.Status }

// GetOutputPaths are the outputs the template declares, in order, and their jsonpaths.
func (t *ClusterSourceTemplate) GetOutputPaths() []OutputPath {
	return []OutputPath{{OutputURL, t.Spec.URLPath}, {OutputRevision, t.Spec.RevisionPath}}
}

// GetOutputPaths are the outputs the template declares, in order, and their jsonpaths.
func (t *ClusterImageTemplate) GetOutputPaths() []OutputPath {
	return []OutputPath{{OutputImage, t.Spec.ImagePath}}
}

// GetOutputPaths are the outputs the template declares, in order, and their jsonpaths.
func (t *ClusterConfigTemplate) GetOutputPaths() []OutputPath {
	return []OutputPath{{OutputConfig, t.Spec.ConfigPath}}
}

// GetOutputPaths is none: a ClusterDeploymentTemplate passes its deployment input through
// as its outputs once its object succeeded.
func (t *ClusterDeploymentTemplate) GetOutputPaths() []OutputPath { return nil }

// GetOutputPaths is none: a ClusterTemplate has no outputs.
func (t *ClusterTemplate) GetOutputPaths() []OutputPath { return nil }
