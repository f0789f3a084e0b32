// Package v1alpha1 holds the carto.run/v1alpha1 API that Surveyor serves: the cluster-scoped
// templates (ClusterSourceTemplate, ClusterImageTemplate, ClusterConfigTemplate,
// ClusterDeploymentTemplate, ClusterTemplate), the blueprints that order them (ClusterSupplyChain,
// ClusterDelivery) and the namespaced owners that are realized through them (Workload, Deliverable).
//
// The API is wire-compatible with Cartographer's carto.run/v1alpha1, so supply chains and templates
// written for Cartographer apply unchanged. Surveyor's additions (healthyConditionRule, conditionRules,
// ttlSecondsAfterFinished, per-resource conditions and template status) are all optional fields.
//
// Validation that does not need a controller lives in the CRD schema: OpenAPI types and enums plus
// CEL rules (x-kubernetes-validations) whose messages name the offending fields. Checks the API server
// cannot do, such as the syntax of a jsonpath or a CEL expression inside a rule, are reported on the
// template's own status instead.
//
// The condition types, reasons, event reasons and label keys that make up the status contract are
// constants in conditions.go and labels.go. The package imports only API packages (apimachinery,
// core/v1, apiextensions/v1), so any client can depend on it cheaply.
//
// +kubebuilder:object:generate=true
// +groupName=carto.run
package v1alpha1
