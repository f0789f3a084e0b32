package workitems

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/expr"
	"github.com/surveyor-dev/surveyor/pkg/health"
)

// rulesField is the field path that errors about condition rules start with.
const rulesField = "conditionRules"

// Validate checks a template's condition rules before they are used and returns a
// *health.InvalidRuleError listing every problem in field order, with paths such as
// conditionRules[0].celExpressions[1].expression, or nil for usable rules. The realizer reports the
// error as the template's Ready=False InvalidConditionRule.
//
// It checks what the CRD schema cannot: every celExpressions[].expression compiles in the shared
// CEL environment and can give a bool or a map {status?, reason, message}, and messageExpression
// compiles and can give a string. An expression over `object` has type dyn and passes; its result
// is checked again when it is evaluated. An expression whose type is known to be something else,
// such as 'done' or 1, is rejected. It also repeats the schema's checks (a known type, a condition
// for CEL rules that is a valid condition type and not one Surveyor sets itself, expressions only
// for CEL rules) for rules that did not come through the API server. Compiled programs land in
// package expr's cache, so Evaluate does not compile them again.
func Validate(rules []v1alpha1.ConditionRule) error {
	var errs []*health.FieldError
	add := func(path string, err error) {
		errs = append(errs, &health.FieldError{Path: path, Err: err})
	}
	for i, r := range rules {
		path := fmt.Sprintf("%s[%d]", rulesField, i)
		switch r.Type {
		case v1alpha1.ConditionRuleTypeCEL:
			if r.Condition == "" {
				add(path+".condition", errors.New("must be set when type is CEL"))
			}
			if len(r.CELExpressions) == 0 {
				add(path+".celExpressions", errors.New("must have at least one expression when type is CEL"))
			}
		case v1alpha1.ConditionRuleTypeWellKnownCompletions:
			if len(r.CELExpressions) != 0 {
				add(path+".celExpressions", errors.New("must not be set when type is WellKnownCompletions"))
			}
		default:
			add(path+".type", fmt.Errorf("must be CEL or WellKnownCompletions, not %q", r.Type))
		}
		if t := r.Condition; t != "" {
			if problems := validation.IsQualifiedName(t); len(problems) != 0 {
				add(path+".condition", fmt.Errorf("%q is not a valid condition type: %s", t, strings.Join(problems, "; ")))
			} else if slices.Contains(reservedConditions, t) {
				add(path+".condition", fmt.Errorf("must not be %s: Surveyor sets that condition itself", t))
			}
		}
		for j, x := range r.CELExpressions {
			if err := checkExpression(x.Expression); err != nil {
				add(fmt.Sprintf("%s.celExpressions[%d].expression", path, j), err)
			}
		}
		if r.MessageExpression != "" {
			if _, err := expr.CompileCEL(r.MessageExpression, expr.ResultString); err != nil {
				add(path+".messageExpression", err)
			}
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return &health.InvalidRuleError{Fields: errs}
}

// checkExpression compiles a celExpressions entry and checks that it can give a bool or a map.
//
// expr.CompileCEL can require a bool, a string or anything; "a bool or a map" is two checks. The bool
// check passes for bool and dyn. When it fails the type is known and not bool, and the expression
// is accepted when `has((E).reason)` type-checks, which holds for a map (and an optional, whose
// value Eval unwraps) and fails for a string, a number, a list or null. The probe is compiled
// through the same cache, once per expression text, and only for expressions whose type is known
// not to be bool, such as a literal map or a ternary of maps.
func checkExpression(expression string) error {
	if strings.TrimSpace(expression) == "" {
		return errors.New("must not be empty")
	}
	if _, err := expr.CompileCEL(expression, expr.ResultAny); err != nil {
		return err
	}
	if _, err := expr.CompileCEL(expression, expr.ResultBool); err == nil {
		return nil
	}
	// The newline ends a trailing // comment in the expression.
	if _, err := expr.CompileCEL("has(("+expression+"\n)."+resultReason+")", expr.ResultAny); err == nil {
		return nil
	}
	return &expr.ExpressionError{Expression: expression, Kind: expr.ErrInvalidExpression,
		Detail: "must evaluate to a bool or a map {status?, reason, message}"}
}
