package v1alpha1

// Condition types. Owner conditions appear in the order SupplyChainReady (DeliveryReady),
// ResourcesSubmitted, ResourcesHealthy, Ready, Available, then any rule conditions; resource
// conditions in the order ResourceSubmitted, Healthy, Ready, then the resource's rule conditions.
const (
	// ConditionSupplyChainReady is True on a Workload when exactly one ready supply chain selects it.
	ConditionSupplyChainReady = "SupplyChainReady"
	// ConditionDeliveryReady is True on a Deliverable when exactly one ready delivery selects it.
	ConditionDeliveryReady = "DeliveryReady"
	// ConditionResourcesSubmitted is True on an owner when every resource was stamped and applied.
	ConditionResourcesSubmitted = "ResourcesSubmitted"
	// ConditionResourcesHealthy is True on an owner when every resource is Healthy.
	ConditionResourcesHealthy = "ResourcesHealthy"
	// ConditionReady is True on an owner when it is submitted and healthy at its current generation,
	// on a resource when it is submitted and healthy, and on a template or blueprint when it is usable.
	ConditionReady = "Ready"
	// ConditionAvailable is the owner's last known good: True, with observedGeneration, for the last
	// generation at which every resource was healthy.
	ConditionAvailable = "Available"
	// ConditionComplete is the condition of completable work (seed 000): once True on a resource, the
	// resource is frozen; once True on the owner, nothing of it is applied any more.
	ConditionComplete = "Complete"
	// ConditionResourceSubmitted is True on a resource when its object was stamped, applied and its
	// outputs read.
	ConditionResourceSubmitted = "ResourceSubmitted"
	// ConditionHealthy is a resource's health as judged by its template's health rule.
	ConditionHealthy = "Healthy"
	// ConditionTemplatesReady is True on a blueprint when every template it references exists.
	ConditionTemplatesReady = "TemplatesReady"
	// ConditionStalled and ConditionReconciling are kstatus's abnormal-true conditions, on
	// owners only with --kstatus-conditions (DESIGN §13), after all others and present only
	// while True: Stalled while Ready is False for a failure only a change of the owner, its
	// blueprint or a template can fix; Reconciling while Ready is otherwise not True.
	ConditionStalled     = "Stalled"
	ConditionReconciling = "Reconciling"
)

// Reasons of SupplyChainReady / DeliveryReady, Ready and TemplatesReady.
const (
	// ReasonReady is the reason of a True SupplyChainReady, DeliveryReady, TemplatesReady or Ready.
	ReasonReady = "Ready"
	// ReasonWorkloadLabelsMissing means the Workload has no labels, so no supply chain can select it.
	ReasonWorkloadLabelsMissing = "WorkloadLabelsMissing"
	// ReasonSupplyChainNotFound means no supply chain selects the Workload.
	ReasonSupplyChainNotFound = "SupplyChainNotFound"
	// ReasonMultipleSupplyChainMatches means several supply chains select the Workload equally well.
	ReasonMultipleSupplyChainMatches = "MultipleSupplyChainMatches"
	// ReasonDeliverableLabelsMissing means the Deliverable has no labels, so no delivery can select it.
	ReasonDeliverableLabelsMissing = "DeliverableLabelsMissing"
	// ReasonDeliveryNotFound means no delivery selects the Deliverable.
	ReasonDeliveryNotFound = "DeliveryNotFound"
	// ReasonMultipleDeliveryMatches means several deliveries select the Deliverable equally well.
	ReasonMultipleDeliveryMatches = "MultipleDeliveryMatches"
	// ReasonSupplyChainNotReconciled means the selected supply chain's status does not describe its
	// current spec yet (Unknown); DeliveryNotReconciled is the same for a delivery.
	ReasonSupplyChainNotReconciled = "SupplyChainNotReconciled"
	// ReasonDeliveryNotReconciled means the selected delivery's status does not describe its current
	// spec yet (Unknown).
	ReasonDeliveryNotReconciled = "DeliveryNotReconciled"
	// ReasonReconcilePanicked is Ready's reason after the reconciler recovered from a panic; the
	// controller log has the stack.
	ReasonReconcilePanicked = "ReconcilePanicked"
	// ReasonConditionNotReported is the reason of an Unknown Ready decided by a child condition that
	// is missing altogether.
	ReasonConditionNotReported = "ConditionNotReported"
	// ReasonTemplatesNotFound means a blueprint references a template that does not exist.
	ReasonTemplatesNotFound = "TemplatesNotFound"
	// ReasonInvalidHealthRule means a template's health rule cannot be used, e.g. a bad jsonpath or
	// CEL expression; on a resource it is a ResourceSubmitted reason.
	ReasonInvalidHealthRule = "InvalidHealthRule"
	// ReasonInvalidConditionRule means a template's condition rule cannot be used, e.g. a CEL
	// expression that does not compile.
	ReasonInvalidConditionRule = "InvalidConditionRule"
	// ReasonRevisionNotTrusted (SupplyChainReady or DeliveryReady False) means the blueprint
	// revision the owner's status pins does not belong to its blueprint, or its content does not
	// match its hash (DESIGN §12): nothing is stamped from it. On a blueprint it is a Warning
	// event: an object with the name of its new revision exists and is not that revision.
	ReasonRevisionNotTrusted = "RevisionNotTrusted"
)

// Reasons of ResourceSubmitted, and of ResourcesSubmitted, which copies the first failing resource's.
const (
	// ReasonResourceSubmissionComplete means the object was applied and its outputs read.
	ReasonResourceSubmissionComplete = "ResourceSubmissionComplete"
	// ReasonPassThrough means a pass-through option forwarded an input without stamping.
	ReasonPassThrough = "PassThrough"
	// ReasonTemplateStampFailure means the template could not be stamped, e.g. a missing $(path)$.
	ReasonTemplateStampFailure = "TemplateStampFailure"
	// ReasonTemplateRejectedByAPIServer means the API server refused the stamped object.
	ReasonTemplateRejectedByAPIServer = "TemplateRejectedByAPIServer"
	// ReasonTemplateObjectRetrievalFailure means the template could not be read.
	ReasonTemplateObjectRetrievalFailure = "TemplateObjectRetrievalFailure"
	// ReasonMissingValueAtPath means an output could not be read from the object yet (Unknown).
	ReasonMissingValueAtPath = "MissingValueAtPath"
	// ReasonTemplateOptionsMatchError means not exactly one template option matched the owner.
	ReasonTemplateOptionsMatchError = "TemplateOptionsMatchError"
	// ReasonResolveTemplateOptionsError means an option's selector could not be evaluated.
	ReasonResolveTemplateOptionsError = "ResolveTemplateOptionsError"
	// ReasonWorkloadComplete is the Unknown ResourceSubmitted of a resource the Workload completed
	// without stamping; DeliverableComplete is the same for a Deliverable.
	ReasonWorkloadComplete = "WorkloadComplete"
	// ReasonDeliverableComplete is the Unknown ResourceSubmitted of a resource the Deliverable
	// completed without stamping.
	ReasonDeliverableComplete = "DeliverableComplete"
	// ReasonKindNotServed is the Unknown ResourceSubmitted of a resource whose stamped kind the API
	// server does not serve right now (its CRD is gone, or its APIService or conversion webhook is
	// down); the message names the kind. The owner is retried until the kind is served again.
	ReasonKindNotServed = "KindNotServed"
	// ReasonConditionNotMet means a ClusterDeploymentTemplate's object has not succeeded yet
	// (observedMatches or observedCompletion); Unknown.
	ReasonConditionNotMet = "ConditionNotMet"
	// ReasonFailedConditionMet means a ClusterDeploymentTemplate's object met its observedCompletion
	// failure condition; False.
	ReasonFailedConditionMet = "FailedConditionMet"
)

// Reasons of Healthy, ResourcesHealthy and Available.
const (
	// ReasonHealthyConditionRule is the reason of ResourcesHealthy, whatever its status.
	ReasonHealthyConditionRule = "HealthyConditionRule"
	// ReasonHealthyAtGeneration is the reason of a True Available.
	ReasonHealthyAtGeneration = "HealthyAtGeneration"
	// ReasonNotYetAvailable means no generation of the owner was ever all healthy.
	ReasonNotYetAvailable = "NotYetAvailable"
	// ReasonAlwaysHealthy is the reason under alwaysHealthy, or for a ClusterTemplate without a rule.
	ReasonAlwaysHealthy = "AlwaysHealthy"
	// ReasonOutputsAvailable means a template without a rule has its outputs present.
	ReasonOutputsAvailable = "OutputsAvailable"
	// ReasonNoStampedObject means there is no stamped object to judge yet.
	ReasonNoStampedObject = "NoStampedObject"
	// ReasonOutputNotAvailable means a template without a rule is missing an output.
	ReasonOutputNotAvailable = "OutputNotAvailable"
	// ReasonHealthRuleEvaluationFailed is the Unknown Healthy of a valid rule that could not be
	// evaluated against this object: a CEL expression went over its cost or time limit or the
	// object's budget, returned the wrong type, or failed.
	ReasonHealthRuleEvaluationFailed = "HealthRuleEvaluationFailed"
	// ReasonMatchedCondition means a multiMatch matchConditions entry decided health.
	ReasonMatchedCondition = "MatchedCondition"
	// ReasonMatchedField means a multiMatch matchFields entry decided health.
	ReasonMatchedField = "MatchedField"
	// ReasonMatchedExpression means a multiMatch matchCEL entry decided health.
	ReasonMatchedExpression = "MatchedExpression"
	// ReasonNoMatchesFulfilled means neither side of a multiMatch rule held.
	ReasonNoMatchesFulfilled = "NoMatchesFulfilled"
	// ReasonLatestGenerationNotObserved means the object, or the owner's resources, have not caught
	// up with the latest generation yet.
	ReasonLatestGenerationNotObserved = "LatestGenerationNotObserved"
	// ReasonConditionSuffix is appended to the condition type X of singleConditionType to form the
	// reason, e.g. ReadyCondition.
	ReasonConditionSuffix = "Condition"
)

// Reasons of rule conditions (conditionRules).
const (
	// ReasonConditionRulesPassed means every rule for the condition held.
	ReasonConditionRulesPassed = "ConditionRulesPassed"
	// ReasonConditionRulesFailed means a rule for the condition did not hold or failed to evaluate.
	ReasonConditionRulesFailed = "ConditionRulesFailed"
)

// Event reasons recorded on the owner.
const (
	// EventResourceHealthyStatusChanged is recorded when a resource's Healthy status changes.
	EventResourceHealthyStatusChanged = "ResourceHealthyStatusChanged"
	// EventStampedObjectApplied is recorded when a stamped object is created or changed.
	EventStampedObjectApplied = "StampedObjectApplied"
	// EventRunDeferred is recorded when a Runnable's new run waits for its pace (DESIGN §12).
	EventRunDeferred = "RunDeferred"
	// EventStampedObjectRemoved is recorded when a stamped object is pruned.
	EventStampedObjectRemoved = "StampedObjectRemoved"
	// EventStampedObjectRemovalFailed (a Warning) is recorded when deleting a stamped
	// object failed: a prune (listed in status.pendingDeletions until it succeeds) or an
	// object beyond a retention policy (tried again on the next pass).
	EventStampedObjectRemovalFailed = "StampedObjectRemovalFailed"
	// EventResourceOutputChanged is recorded when a resource's output digest changes.
	EventResourceOutputChanged = "ResourceOutputChanged"
)

// Rollout conditions, reasons and events on a blueprint with a rolloutStrategy (DESIGN §9).
const (
	// ConditionRolloutProgressing is True while a change is being admitted or soaked.
	ConditionRolloutProgressing = "RolloutProgressing"
	// ConditionRolloutDegraded is True while failures stop admission.
	ConditionRolloutDegraded = "RolloutDegraded"

	// ReasonRolloutProgressing says owners are being admitted or are soaking.
	ReasonRolloutProgressing = "Progressing"
	// ReasonRolloutPaused says rolloutStrategy.paused holds new admissions.
	ReasonRolloutPaused = "Paused"
	// ReasonRolloutSuperseded says a newer change replaced the one being rolled out.
	ReasonRolloutSuperseded = "Superseded"
	// ReasonRolloutComplete says every owner is at the target revision
	// (RolloutProgressing=False).
	ReasonRolloutComplete = "RolloutComplete"
	// ReasonRolloutNotDegraded says failures are within budget (RolloutDegraded=False).
	ReasonRolloutNotDegraded = "FailuresWithinBudget"
	// ReasonMaxFailuresBreached says more owners failed than maxFailures allows.
	ReasonMaxFailuresBreached = "MaxFailuresBreached"
	// ReasonMandatoryGroupFailed says an owner of a mandatory group failed.
	ReasonMandatoryGroupFailed = "MandatoryGroupFailed"

	// EventRolloutStarted is recorded when a new target revision starts rolling out.
	EventRolloutStarted = "RolloutStarted"
	// EventGroupStarted is recorded when a group's first owners are admitted.
	EventGroupStarted = "GroupStarted"
	// EventRolloutSucceeded is recorded when every owner is at the target revision.
	EventRolloutSucceeded = "RolloutSucceeded"
	// EventRolloutSuperseded is recorded when a newer change replaces the one rolling out.
	EventRolloutSuperseded = "RolloutSuperseded"
	// EventMaxFailuresBreached (Warning) is recorded when failures stop admission.
	EventMaxFailuresBreached = "MaxFailuresBreached"
)

// Runnable conditions and reasons (Cartographer's), in the order RunTemplateReady,
// StampedObjectCondition, Ready. Ready is True with reason Ready when both are True;
// otherwise it copies the last False of them, else the first Unknown.
const (
	// ConditionRunTemplateReady is True when the run template was read, the selector resolved,
	// the run stamped and created (or found) and the outputs read.
	ConditionRunTemplateReady = "RunTemplateReady"
	// ConditionStampedObjectCondition is the newest run's Succeeded condition: its status and
	// message with reason SucceededCondition, or Unknown with reason Unknown when it has none.
	ConditionStampedObjectCondition = "StampedObjectCondition"

	// ReasonRunTemplateNotFound means the ClusterRunTemplate could not be read.
	ReasonRunTemplateNotFound = "RunTemplateNotFound"
	// ReasonStampedObjectRejectedByAPIServer means the API server refused to create a run.
	ReasonStampedObjectRejectedByAPIServer = "StampedObjectRejectedByAPIServer"
	// ReasonFailedToListCreatedObjects means the Runnable's runs could not be listed.
	ReasonFailedToListCreatedObjects = "FailedToListCreatedObjects"
	// ReasonOutputPathNotSatisfied means an output could not be read from the latest run that
	// succeeded; status.outputs keeps what it held.
	ReasonOutputPathNotSatisfied = "OutputPathNotSatisfied"
	// ReasonUnknownError means a failure no other reason describes.
	ReasonUnknownError = "UnknownError"
	// ReasonServiceAccountError means the Runnable's ServiceAccount could not be read.
	ReasonServiceAccountError = "ServiceAccountError"
	// ReasonClientBuilderError means no client acting as the ServiceAccount could be made.
	ReasonClientBuilderError = "ClientBuilderError"
	// ReasonSucceededCondition is StampedObjectCondition's reason when the newest run has a
	// Succeeded condition.
	ReasonSucceededCondition = "SucceededCondition"
	// ReasonUnknown is StampedObjectCondition's reason when the newest run has no Succeeded
	// condition, or there is no run.
	ReasonUnknown = "Unknown"
)
