package health

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/expr"
)

// The fields a template can write its health rule in. Messages about a rule start with the one
// the template used, so that they name what the user wrote.
const (
	// FieldHealthyConditionRule is Surveyor's name for the rule.
	FieldHealthyConditionRule = "healthyConditionRule"
	// FieldHealthRule is Cartographer's name for the same rule.
	FieldHealthRule = "healthRule"
)

// RuleOf returns a template's health rule (TemplateSpec.EffectiveHealthRule) and the field it is
// written in: FieldHealthRule when the template uses Cartographer's name for it, otherwise
// FieldHealthyConditionRule (also for the rule lifecycle tekton implies).
func RuleOf(spec *v1alpha1.TemplateSpec) (*v1alpha1.HealthRule, string) {
	if spec == nil {
		return nil, FieldHealthyConditionRule
	}
	if spec.HealthyConditionRule == nil && spec.HealthRule != nil {
		return spec.HealthRule, FieldHealthRule
	}
	return spec.EffectiveHealthRule(), FieldHealthyConditionRule
}

// fieldOr returns field, or FieldHealthyConditionRule when it is empty.
func fieldOr(field string) string {
	if field == "" {
		return FieldHealthyConditionRule
	}
	return field
}

// Input is what Evaluate judges: the rule, the stamped object and what the realizer learnt about
// the object's outputs.
type Input struct {
	// Rule is the template's health rule, nil when the template has none.
	Rule *v1alpha1.HealthRule
	// Field is the field the rule is written in, which messages about the rule start with:
	// FieldHealthRule or FieldHealthyConditionRule (the default when empty). See RuleOf.
	Field string
	// Object is the stamped object as last observed, nil when nothing was stamped yet.
	Object *unstructured.Unstructured
	// HasOutputs says whether the template declares outputs. Only a ClusterTemplate declares none.
	HasOutputs bool
	// OutputsRead says whether every declared output was read from the object.
	OutputsRead bool
	// Scope carries the CEL activation and cost budget of Object and must have been made from
	// Object's content. Pass the Scope the caller also uses for the object's condition rules so
	// that all of them share one budget; nil makes Evaluate create one when the rule has CEL
	// matchers.
	Scope *expr.Scope
}

// Evaluate judges the object's health under the rule and returns its Healthy condition (DESIGN §4).
// It sets neither ObservedGeneration nor LastTransitionTime: the caller stamps the generation and
// merges the condition into the status.
//
//   - No object: Unknown OutputNotAvailable for a template with outputs and no rule, Unknown
//     NoStampedObject for any other (as Cartographer, except that it says Unknown under
//     singleConditionType and multiMatch).
//   - No rule: a template without outputs (a ClusterTemplate) is True AlwaysHealthy; otherwise
//     True OutputsAvailable once every output was read, Unknown OutputNotAvailable before.
//   - alwaysHealthy: True AlwaysHealthy with an empty message.
//   - singleConditionType X: the condition's status and message with reason XCondition; Unknown
//     with "condition with type [X] not found on resource status" when the object lacks it.
//   - multiMatch: see evaluateMultiMatch.
//
// Except under alwaysHealthy and for a ClusterTemplate without a rule, an object that has not
// observed its latest generation (status.observedGeneration, or the observedGeneration of the
// condition that decided) is Unknown LatestGenerationNotObserved (seed 003).
func Evaluate(in Input) metav1.Condition {
	c := evaluate(in)
	c.Type = v1alpha1.ConditionHealthy
	c.Message = TruncateMessage(c.Message)
	return c
}

func evaluate(in Input) metav1.Condition {
	if in.Object == nil {
		// Cartographer's reasons: OutputNotAvailable for a template with outputs and no rule,
		// NoStampedObject otherwise. Under singleConditionType or multiMatch Cartographer says
		// "Unknown"; DESIGN §4 keeps NoStampedObject there, which says what is true.
		if in.Rule == nil && in.HasOutputs {
			return unknown(v1alpha1.ReasonOutputNotAvailable, "no object has been stamped yet")
		}
		return unknown(v1alpha1.ReasonNoStampedObject, "no object has been stamped yet")
	}
	rule := in.Rule
	switch {
	case rule == nil && !in.HasOutputs, rule != nil && rule.AlwaysHealthy != nil:
		return healthy(v1alpha1.ReasonAlwaysHealthy, "")
	}
	obj := in.Object.Object
	if c, stale := staleObject(in.Object); stale {
		return c
	}
	switch {
	case rule == nil && !in.OutputsRead:
		return unknown(v1alpha1.ReasonOutputNotAvailable, "waiting for the object's outputs")
	case rule == nil:
		return healthy(v1alpha1.ReasonOutputsAvailable, "")
	case rule.SingleConditionType != "":
		return evaluateSingleCondition(in.Object, rule.SingleConditionType)
	case rule.MultiMatch != nil:
		m := matcher{object: in.Object, obj: obj, s: in.Scope, ruleField: fieldOr(in.Field)}
		return m.evaluate(rule.MultiMatch)
	}
	return unknown(v1alpha1.ReasonInvalidHealthRule, "the health rule sets none of alwaysHealthy, singleConditionType or multiMatch")
}

func evaluateSingleCondition(obj *unstructured.Unstructured, condType string) metav1.Condition {
	reason := conditionReason(condType)
	cond, ok := findCondition(obj.Object, condType)
	if !ok {
		return unknown(reason, fmt.Sprintf("condition with type [%s] not found on resource status", condType))
	}
	if c, stale := staleCondition(obj, cond); stale {
		return c
	}
	status := metav1.ConditionStatus(cond.str("status"))
	if status != metav1.ConditionTrue && status != metav1.ConditionFalse {
		status = metav1.ConditionUnknown
	}
	return metav1.Condition{Status: status, Reason: reason, Message: cond.str("message")}
}

// conditionReason is X + "Condition" for singleConditionType X, with the characters a condition
// reason may not hold (a qualified type such as example.com/Ready has '.' and '/') replaced by '_',
// so that the API server accepts the status.
func conditionReason(condType string) string {
	b := []byte(condType + v1alpha1.ReasonConditionSuffix)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == ',' || c == ':') {
			b[i] = '_'
		}
	}
	if c := b[0]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
		return "X" + string(b)
	}
	return string(b)
}

// staleObject reports an Unknown LatestGenerationNotObserved when the object carries an integer
// status.observedGeneration below its metadata.generation. Objects without either field are
// judged as they are.
func staleObject(obj *unstructured.Unstructured) (metav1.Condition, bool) {
	status, _ := obj.Object["status"].(map[string]any)
	observed, ok := integer(status["observedGeneration"])
	if !ok {
		return metav1.Condition{}, false
	}
	return staleness(obj, observed)
}

// staleCondition is staleObject for the observedGeneration of one of the object's conditions.
func staleCondition(obj *unstructured.Unstructured, cond objectCondition) (metav1.Condition, bool) {
	observed, ok := integer(cond["observedGeneration"])
	if !ok {
		return metav1.Condition{}, false
	}
	return staleness(obj, observed)
}

func staleness(obj *unstructured.Unstructured, observed int64) (metav1.Condition, bool) {
	metadata, _ := obj.Object["metadata"].(map[string]any)
	generation, ok := integer(metadata["generation"])
	if !ok || observed >= generation {
		return metav1.Condition{}, false
	}
	return unknown(v1alpha1.ReasonLatestGenerationNotObserved,
		fmt.Sprintf("waiting for %s/%s to observe generation %d (observed %d)",
			obj.GetKind(), obj.GetName(), generation, observed)), true
}

// integer reads a JSON integer. Unstructured content holds int64; float64 appears when an object
// was decoded by a plain JSON decoder, and counts when it is whole.
func integer(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	case float64:
		if n == float64(int64(n)) {
			return int64(n), true
		}
	}
	return 0, false
}

// objectCondition is one entry of an object's status.conditions.
type objectCondition map[string]any

func (c objectCondition) str(key string) string {
	s, _ := c[key].(string)
	return s
}

// findCondition returns the first entry of status.conditions whose type is condType. It walks the
// map directly rather than through jsonpath: it runs on every evaluation.
func findCondition(obj map[string]any, condType string) (objectCondition, bool) {
	status, _ := obj["status"].(map[string]any)
	conditions, _ := status["conditions"].([]any)
	for _, c := range conditions {
		m, ok := c.(map[string]any)
		if !ok {
			continue
		}
		if t, _ := m["type"].(string); t == condType {
			return m, true
		}
	}
	return nil, false
}

func healthy(reason, message string) metav1.Condition {
	return metav1.Condition{Status: metav1.ConditionTrue, Reason: reason, Message: message}
}

func unhealthy(reason, message string) metav1.Condition {
	return metav1.Condition{Status: metav1.ConditionFalse, Reason: reason, Message: message}
}

func unknown(reason, message string) metav1.Condition {
	return metav1.Condition{Status: metav1.ConditionUnknown, Reason: reason, Message: message}
}

// maxMessage is the API's limit on a condition message.
const maxMessage = 32768

// TruncateMessage cuts a condition message to the API's limit at a rune boundary, so that a long
// message read from an object or produced by an expression can never make a status write fail.
func TruncateMessage(msg string) string {
	if len(msg) <= maxMessage {
		return msg
	}
	const ellipsis = "..."
	cut := maxMessage - len(ellipsis)
	for cut > 0 && msg[cut]&0xC0 == 0x80 {
		cut--
	}
	return msg[:cut] + ellipsis
}
