package health

import (
	"errors"
	"fmt"
	"strings"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/expr"
)

// FieldError is one problem of a rule, at a field path such as
// healthyConditionRule.multiMatch.healthy.matchCEL[0].expression.
type FieldError struct {
	// Path is the field path of the problem.
	Path string
	// Err says what is wrong. For an expression it wraps expr.ErrInvalidExpression and quotes it.
	Err error
}

// Error returns "path: problem".
func (e *FieldError) Error() string { return e.Path + ": " + e.Err.Error() }

// Unwrap returns the problem.
func (e *FieldError) Unwrap() error { return e.Err }

// InvalidRuleError lists every problem of a health rule, in field order.
type InvalidRuleError struct {
	// Fields are the problems, at least one.
	Fields []*FieldError
}

// Error returns the problems separated by "; ".
func (e *InvalidRuleError) Error() string {
	msgs := make([]string, len(e.Fields))
	for i, f := range e.Fields {
		msgs[i] = f.Error()
	}
	return strings.Join(msgs, "; ")
}

// Unwrap returns the problems, so errors.Is and errors.As see each one.
func (e *InvalidRuleError) Unwrap() []error {
	errs := make([]error, len(e.Fields))
	for i, f := range e.Fields {
		errs[i] = f
	}
	return errs
}

// Validate checks a health rule before it is used and returns an *InvalidRuleError, or nil for a
// usable rule (a nil rule is usable). It checks what the CRD schema cannot: every jsonpath (matchFields
// keys and messagePaths) parses, and every CEL expression compiles with the right type (bool for
// expression, string for messageExpression). It also repeats the schema's structural checks (one
// form, non-empty sides, known operators, values for In and NotIn) for rules that did not come
// through the API server. Parsed paths and compiled programs land in the caches, so Evaluate does
// not compile them again. Templates report the error as Ready=False InvalidHealthRule.
//
// field is the field the rule is written in, FieldHealthRule or FieldHealthyConditionRule (the
// default when empty; see RuleOf): every problem's path starts with it, so the message names what
// the user wrote.
func Validate(rule *v1alpha1.HealthRule, field string) error {
	if rule == nil {
		return nil
	}
	field = fieldOr(field)
	v := validator{}
	forms := 0
	if rule.AlwaysHealthy != nil {
		forms++
	}
	if rule.SingleConditionType != "" {
		forms++
	}
	if rule.MultiMatch != nil {
		forms++
		v.matchRule(field+".multiMatch.healthy", &rule.MultiMatch.Healthy)
		v.matchRule(field+".multiMatch.unhealthy", &rule.MultiMatch.Unhealthy)
	}
	if forms != 1 {
		v.add(field, fmt.Errorf("exactly one of alwaysHealthy, singleConditionType or multiMatch must be set, found %d", forms))
	}
	if len(v.errs) == 0 {
		return nil
	}
	return &InvalidRuleError{Fields: v.errs}
}

type validator struct {
	errs []*FieldError
}

func (v *validator) add(path string, err error) {
	v.errs = append(v.errs, &FieldError{Path: path, Err: err})
}

func (v *validator) matchRule(path string, r *v1alpha1.MatchRule) {
	if len(r.MatchConditions)+len(r.MatchFields)+len(r.MatchCEL) == 0 {
		v.add(path, errors.New("must set at least one of matchConditions, matchFields or matchCEL"))
	}
	for i, c := range r.MatchConditions {
		p := fmt.Sprintf("%s.matchConditions[%d]", path, i)
		if c.Type == "" {
			v.add(p+".type", errors.New("must not be empty"))
		}
		switch c.Status {
		case "True", "False", "Unknown":
		default:
			v.add(p+".status", fmt.Errorf("must be True, False or Unknown, not %q", c.Status))
		}
	}
	for i, f := range r.MatchFields {
		p := fmt.Sprintf("%s.matchFields[%d]", path, i)
		if _, err := expr.ParsePath(f.Key); err != nil {
			v.add(p+".key", err)
		}
		switch f.Operator {
		case v1alpha1.FieldSelectorOpIn, v1alpha1.FieldSelectorOpNotIn:
			if len(f.Values) == 0 {
				v.add(p+".values", fmt.Errorf("must be set when operator is %s", f.Operator))
			}
		case v1alpha1.FieldSelectorOpExists, v1alpha1.FieldSelectorOpDoesNotExist:
			if len(f.Values) != 0 {
				v.add(p+".values", fmt.Errorf("must not be set when operator is %s", f.Operator))
			}
		default:
			v.add(p+".operator", fmt.Errorf("must be In, NotIn, Exists or DoesNotExist, not %q", f.Operator))
		}
		if f.MessagePath != "" {
			if _, err := expr.ParsePath(f.MessagePath); err != nil {
				v.add(p+".messagePath", err)
			}
		}
	}
	for i, c := range r.MatchCEL {
		p := fmt.Sprintf("%s.matchCEL[%d]", path, i)
		if _, err := expr.CompileCEL(c.Expression, expr.ResultBool); err != nil {
			v.add(p+".expression", err)
		}
		if c.MessageExpression != "" {
			if _, err := expr.CompileCEL(c.MessageExpression, expr.ResultString); err != nil {
				v.add(p+".messageExpression", err)
			}
		}
	}
}
