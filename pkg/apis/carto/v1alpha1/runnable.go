package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Runnable stamps runs from a ClusterRunTemplate: a new run (an object that is never
// updated, typically a Tekton PipelineRun or a Job-like object) whenever the stamped content
// differs from its newest run's, and reports the outputs of its latest run that succeeded.
// Supply chains stamp Runnables to run tests and read their status.outputs.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName=run,categories=carto
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=='Ready')].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=='Ready')].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Runnable struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is what to run and with what.
	// +required
	Spec RunnableSpec `json:"spec"`

	// Status reports the run template, the newest run and the outputs.
	// +optional
	Status RunnableStatus `json:"status,omitempty"`
}

// RunnableList is a list of Runnable.
//
// +kubebuilder:object:root=true
type RunnableList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the Runnables.
	Items []Runnable `json:"items"`
}

// RunnableSpec is the spec of a Runnable. Templates read any of it as $(runnable.spec...)$.
type RunnableSpec struct {
	// RunTemplateRef names the ClusterRunTemplate that stamps the runs.
	// +required
	RunTemplateRef RunTemplateReference `json:"runTemplateRef"`

	// Selector chooses one object, read as $(selected...)$: the object of the given type, in
	// the Runnable's namespace (anywhere for a cluster-scoped kind), carrying every label of
	// matchingLabels. Its changes are realized at once.
	// +optional
	Selector *ResourceSelector `json:"selector,omitempty"`

	// Inputs are values the template reads as $(runnable.spec.inputs.<name>)$. Any JSON values.
	// +optional
	// +kubebuilder:validation:MaxProperties=128
	Inputs map[string]apiextensionsv1.JSON `json:"inputs,omitempty"`

	// ServiceAccountName is the ServiceAccount, in the Runnable's namespace, whose identity
	// selects, creates and deletes the runs. It defaults to "default".
	// +optional
	// +kubebuilder:validation:MaxLength=253
	ServiceAccountName string `json:"serviceAccountName,omitempty"`

	// RetentionPolicy bounds how many finished runs are kept: a run whose Succeeded condition
	// is True counts as successful, False as failed; one still running counts as neither. The
	// oldest beyond these counts are deleted.
	// +optional
	// +kubebuilder:default={maxFailedRuns: 10, maxSuccessfulRuns: 10}
	RetentionPolicy *RetentionPolicy `json:"retentionPolicy,omitempty"`
}

// RunTemplateReference names a ClusterRunTemplate.
type RunTemplateReference struct {
	// Kind is ignored: the template is always a ClusterRunTemplate. It is accepted because
	// Cartographer's Runnables may set it.
	// +optional
	Kind string `json:"kind,omitempty"`

	// Name is the ClusterRunTemplate's name.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// ResourceSelector chooses exactly one object by its type and labels.
type ResourceSelector struct {
	// Resource is the type of the object.
	// +required
	Resource ResourceType `json:"resource"`

	// MatchingLabels are labels the object must all carry; empty matches every object of
	// the type.
	// +required
	MatchingLabels map[string]string `json:"matchingLabels"`
}

// ResourceType is a type of object: its group/version and kind.
type ResourceType struct {
	// APIVersion is the type's group/version, e.g. apps/v1.
	// +optional
	APIVersion string `json:"apiVersion,omitempty"`

	// Kind is the type's kind.
	// +optional
	Kind string `json:"kind,omitempty"`
}

// RunnableStatus is the status of a Runnable.
type RunnableStatus struct {
	// ObservedGeneration is the Runnable generation this status was computed for.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions are, in order, RunTemplateReady, StampedObjectCondition (the newest run's
	// Succeeded condition; absent when no run could be looked for) and Ready.
	// +optional
	// +listType=atomic
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Outputs are the values the template's outputs read from the latest run that succeeded.
	// They are kept while no run has succeeded yet and while reading them fails, so an error
	// never takes away what a supply chain reads.
	// +optional
	Outputs map[string]apiextensionsv1.JSON `json:"outputs,omitempty"`

	// Runs are the runs of the current template, newest first, with their Succeeded
	// condition; at most MaxReportedRuns of them.
	// +optional
	// +listType=atomic
	Runs []RunStatus `json:"runs,omitempty"`
}

// MaxReportedRuns bounds status.runs: the retention policy bounds the finished runs, but not
// those still running.
const MaxReportedRuns = 32

// RunStatus is one run of a Runnable.
type RunStatus struct {
	// APIVersion is the run's group/version.
	// +required
	APIVersion string `json:"apiVersion"`

	// Kind is the run's kind.
	// +required
	Kind string `json:"kind"`

	// Name is the run's name, in the Runnable's namespace.
	// +required
	Name string `json:"name"`

	// Created is when the run was created.
	// +optional
	Created metav1.Time `json:"created,omitempty"`

	// Succeeded is the status of the run's Succeeded condition: True, False, or Unknown while
	// it runs or has no such condition.
	// +required
	Succeeded metav1.ConditionStatus `json:"succeeded"`

	// Reason is the Succeeded condition's reason.
	// +optional
	Reason string `json:"reason,omitempty"`

	// Message is the Succeeded condition's message.
	// +optional
	Message string `json:"message,omitempty"`
}
