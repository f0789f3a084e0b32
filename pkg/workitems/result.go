package workitems

import (
	"fmt"
	"maps"
	"regexp"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/expr"
)

// Keys of a map result {status?, reason, message}.
const (
	resultStatus  = "status"
	resultReason  = "reason"
	resultMessage = "message"
)

// mapDefaultStatus is the status of a map result without a status key. It is False, not True,
// because a Complete verdict is final: a map that forgets its status must not freeze the resource.
// See Evaluate.
const mapDefaultStatus = metav1.ConditionFalse

// reasonPattern and maxReason are the API's rules for a condition reason. A reason from a map
// result is checked against them so that it cannot make the owner's status write fail.
var reasonPattern = regexp.MustCompile(`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`)

const maxReason = 1024

// outcome is what one expression said. An empty reason or message means the default for the
// status.
type outcome struct {
	status  metav1.ConditionStatus
	reason  string
	message string
	isMap   bool
}

// condition turns the outcome into a condition (without type) for condition type cond.
func (o outcome) condition(cond string) metav1.Condition {
	c := condition(o.status, o.reason, o.message)
	if c.Reason == "" {
		c.Reason = v1alpha1.ReasonConditionRulesFailed
		if o.status == metav1.ConditionTrue {
			c.Reason = v1alpha1.ReasonConditionRulesPassed
		}
	}
	if c.Message == "" {
		switch o.status {
		case metav1.ConditionTrue:
			c.Message = "Resource is " + cond
		case metav1.ConditionFalse:
			c.Message = "Resource is not " + cond
		default:
			c.Message = "Resource is not known to be " + cond
		}
	}
	return c
}

// outcomeOf reads an expression's result: a bool, or a map {status?, reason, message}.
func outcomeOf(expression string, v any) (outcome, error) {
	switch x := v.(type) {
	case bool:
		return outcome{status: boolStatus(x)}, nil
	case map[string]any:
		return mapOutcome(expression, x)
	}
	return outcome{}, &expr.ExpressionError{Expression: expression, Kind: expr.ErrResultType,
		Detail: "must evaluate to a bool or a map {status?, reason, message}, but evaluated to " + typeName(v)}
}

func mapOutcome(expression string, m map[string]any) (outcome, error) {
	o := outcome{status: mapDefaultStatus, isMap: true}
	fail := func(format string, args ...any) (outcome, error) {
		return outcome{}, &expr.ExpressionError{Expression: expression, Kind: expr.ErrResultType,
			Detail: "map result: " + fmt.Sprintf(format, args...)}
	}
	// Sorted, so that a map with several problems always reports the same one.
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := m[k]
		switch k {
		case resultStatus:
			switch s := v.(type) {
			case bool:
				o.status = boolStatus(s)
			case string:
				switch st := metav1.ConditionStatus(s); st {
				case metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionUnknown:
					o.status = st
				default:
					return fail("status %q must be true, false, \"True\", \"False\" or \"Unknown\"", s)
				}
			default:
				return fail("status must be a bool or a string, not %s", typeName(v))
			}
		case resultReason:
			s, ok := v.(string)
			if !ok {
				return fail("reason must be a string, not %s", typeName(v))
			}
			if s != "" && (len(s) > maxReason || !reasonPattern.MatchString(s)) {
				return fail("reason %q is not a valid condition reason (a letter, then letters, digits, '_', ',' or ':', at most %d characters)", s, maxReason)
			}
			o.reason = s
		case resultMessage:
			s, ok := v.(string)
			if !ok {
				return fail("message must be a string, not %s", typeName(v))
			}
			o.message = s
		default:
			return fail("unknown key %q: only status, reason and message are allowed", k)
		}
	}
	return o, nil
}

func boolStatus(b bool) metav1.ConditionStatus {
	if b {
		return metav1.ConditionTrue
	}
	return metav1.ConditionFalse
}

// typeName names the CEL type of a value from expr.Program.Eval.
func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "bool"
	case int64:
		return "int"
	case uint64:
		return "uint"
	case float64:
		return "double"
	case string:
		return "string"
	case []byte:
		return "bytes"
	case []any:
		return "list"
	case map[string]any:
		return "map"
	}
	return fmt.Sprintf("%T", v)
}
