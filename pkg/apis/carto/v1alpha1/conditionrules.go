package v1alpha1

// ConditionRuleType is how a condition rule evaluates a stamped object.
// +kubebuilder:validation:Enum=CEL;WellKnownCompletions
type ConditionRuleType string

const (
	// ConditionRuleTypeCEL evaluates the rule's celExpressions; the condition holds when all are true.
	ConditionRuleTypeCEL ConditionRuleType = "CEL"
	// ConditionRuleTypeWellKnownCompletions applies Surveyor's built-in completion verdicts for Jobs
	// and Pods (DESIGN §5).
	ConditionRuleTypeWellKnownCompletions ConditionRuleType = "WellKnownCompletions"
)

// ConditionRule derives one condition of a stamped object, for example Complete. Each rule yields a
// resource condition of type Condition; several rules for the same condition are ANDed.
//
// The reserved list below holds the conditions Surveyor itself sets on a resource or an owner; a rule
// may not produce one of them, because the two writers would fight over it.
//
// +kubebuilder:validation:XValidation:rule="self.type != 'CEL' || (has(self.condition) && size(self.condition) > 0)",message="condition is required when type is CEL",fieldPath=".condition"
// +kubebuilder:validation:XValidation:rule="self.type != 'CEL' || (has(self.celExpressions) && size(self.celExpressions) > 0)",message="celExpressions must have at least one expression when type is CEL",fieldPath=".celExpressions"
// +kubebuilder:validation:XValidation:rule="self.type != 'WellKnownCompletions' || !has(self.celExpressions) || size(self.celExpressions) == 0",message="celExpressions must not be set when type is WellKnownCompletions",fieldPath=".celExpressions"
// +kubebuilder:validation:XValidation:rule="!has(self.condition) || !(self.condition in ['Ready', 'Healthy', 'ResourceSubmitted', 'SupplyChainReady', 'DeliveryReady', 'ResourcesSubmitted', 'ResourcesHealthy', 'Available'])",message="condition must not be one Surveyor sets itself (Ready, Healthy, ResourceSubmitted, SupplyChainReady, DeliveryReady, ResourcesSubmitted, ResourcesHealthy, Available)",fieldPath=".condition"
type ConditionRule struct {
	// Condition is the type of the condition this rule sets, e.g. Complete. Required for CEL rules;
	// WellKnownCompletions rules default to Complete (see ConditionType).
	// +optional
	// +kubebuilder:validation:MaxLength=316
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$`
	Condition string `json:"condition,omitempty"`

	// Type is CEL or WellKnownCompletions.
	// +required
	Type ConditionRuleType `json:"type"`

	// CELExpressions are ANDed. Each must evaluate to a bool, or to a map {status?, reason, message}
	// that sets the condition's reason and message itself.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	CELExpressions []CELConditionExpression `json:"celExpressions,omitempty"`

	// MessageExpression is an optional CEL expression over `object` whose string result becomes the
	// condition message.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	MessageExpression string `json:"messageExpression,omitempty"`
}

// CELConditionExpression is one CEL expression of a condition rule. The variable `object` is the
// stamped object.
type CELConditionExpression struct {
	// Expression is the CEL expression to evaluate.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	Expression string `json:"expression"`
}

// ConditionType returns the condition type the rule sets: Condition when given, Complete for a
// WellKnownCompletions rule without one. The CRD cannot default a field conditionally, hence this
// accessor.
func (r ConditionRule) ConditionType() string {
	if r.Condition == "" && r.Type == ConditionRuleTypeWellKnownCompletions {
		return ConditionComplete
	}
	return r.Condition
}
