package v1alpha1

// Label keys Surveyor sets on every stamped object (DESIGN §3.4). Informers for stamped kinds
// select on them, so objects Surveyor did not stamp never enter its caches.
const (
	// LabelWorkloadName is the name of the Workload the object was stamped for.
	LabelWorkloadName = "carto.run/workload-name"
	// LabelWorkloadNamespace is the namespace of the Workload the object was stamped for.
	LabelWorkloadNamespace = "carto.run/workload-namespace"
	// LabelSupplyChainName is the name of the supply chain that stamped the object.
	LabelSupplyChainName = "carto.run/supply-chain-name"
	// LabelDeliverableName is the name of the Deliverable the object was stamped for.
	LabelDeliverableName = "carto.run/deliverable-name"
	// LabelDeliverableNamespace is the namespace of the Deliverable the object was stamped for.
	LabelDeliverableNamespace = "carto.run/deliverable-namespace"
	// LabelDeliveryName is the name of the delivery that stamped the object.
	LabelDeliveryName = "carto.run/delivery-name"
	// LabelResourceName is the name of the blueprint resource the object was stamped for.
	LabelResourceName = "carto.run/resource-name"
	// LabelTemplateKind is the kind of the template the object was stamped from.
	LabelTemplateKind = "carto.run/template-kind"
	// LabelClusterTemplateName is the name of the template the object was stamped from.
	LabelClusterTemplateName = "carto.run/cluster-template-name"
	// LabelTemplateLifecycle is the lifecycle of the template the object was stamped from:
	// mutable, immutable or tekton. Templates read it back, as under Cartographer.
	LabelTemplateLifecycle = "carto.run/template-lifecycle"
)

// Label keys on a BlueprintRevision, naming the blueprint it is a snapshot of.
const (
	// LabelBlueprintKind is the blueprint's kind, ClusterSupplyChain or ClusterDelivery.
	LabelBlueprintKind = "carto.run/blueprint-kind"
	// LabelBlueprintName is the blueprint's name.
	LabelBlueprintName = "carto.run/blueprint-name"
)

// Label keys on the runs a Runnable stamps (Cartographer's).
const (
	// LabelRunnableName is the name of the Runnable the run was stamped for.
	LabelRunnableName = "carto.run/runnable-name"
	// LabelRunTemplateName is the name of the ClusterRunTemplate the run was stamped from.
	LabelRunTemplateName = "carto.run/run-template-name"
)

// LabelShardKey is an owner's shard (DESIGN §13, Sharding): a replica started with
// --watch-label-selector on it realizes the owners of its shard alone. Every object stamped
// for an owner carries the owner's value (and none when the owner has none), so stamped
// objects follow their owner into its shard's caches.
const LabelShardKey = "sharding.surveyor.dev/key"
