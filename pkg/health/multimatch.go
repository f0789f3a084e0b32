package health

import (
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/expr"
)

// noValue stands for the value of a field that cannot be read, in "field value: <none>".
const noValue = "<none>"

// matcher evaluates the matchers of a multiMatch rule against one object.
type matcher struct {
	object    *unstructured.Unstructured
	obj       map[string]any // object.Object
	s         *expr.Scope    // created on the first CEL matcher unless the caller gave one
	ruleField string         // the field the rule is written in, which messages start with
}

// evaluate applies a multiMatch rule:
//
//  1. unhealthy, in the order matchConditions, matchFields, matchCEL: the first matcher that holds
//     makes the object False with its reason (MatchedCondition, MatchedField, MatchedExpression);
//  2. healthy, in the same order: when every matcher holds the object is True with the reason and
//     message of the first one;
//  3. otherwise Unknown NoMatchesFulfilled, naming the first healthy matcher that did not hold.
//
// A matcher that cannot be evaluated (an invalid jsonpath or expression, a CEL error other than
// missing data, an exhausted budget) makes the result Unknown, with reason InvalidHealthRule for a
// rule that cannot compile and HealthRuleEvaluationFailed otherwise, unless an unhealthy matcher
// holds: any unhealthy matcher decides. A matched condition whose observedGeneration is below the
// object's generation makes the result Unknown LatestGenerationNotObserved.
func (m *matcher) evaluate(rule *v1alpha1.MultiMatchRule) metav1.Condition {
	if c, decided := m.unhealthy(&rule.Unhealthy); decided {
		return c
	}
	return m.healthy(&rule.Healthy)
}

func (m *matcher) unhealthy(r *v1alpha1.MatchRule) (metav1.Condition, bool) {
	for _, req := range r.MatchConditions {
		if cond, ok := m.condition(req); ok {
			if c, stale := staleCondition(m.object, cond); stale {
				return c, true
			}
			return unhealthy(v1alpha1.ReasonMatchedCondition, conditionMessage(cond)), true
		}
	}
	var failure *metav1.Condition
	fail := func(c metav1.Condition) {
		if failure == nil {
			failure = &c
		}
	}
	for i, req := range r.MatchFields {
		value, ok, c := m.field("unhealthy", i, req)
		switch {
		case c != nil:
			fail(*c)
		case ok:
			msg, c := m.message("unhealthy", i, req.MessagePath)
			if c != nil {
				return *c, true
			}
			return unhealthy(v1alpha1.ReasonMatchedField, fieldMessage(value, msg)), true
		}
	}
	for i, req := range r.MatchCEL {
		ok, c := m.expression("unhealthy", i, req)
		switch {
		case c != nil:
			fail(*c)
		case ok:
			return unhealthy(v1alpha1.ReasonMatchedExpression, m.expressionMessage(req)), true
		}
	}
	if failure != nil {
		return *failure, true
	}
	return metav1.Condition{}, false
}

func (m *matcher) healthy(r *v1alpha1.MatchRule) metav1.Condition {
	var first metav1.Condition // the verdict of the first matcher, once decided
	decided := false
	decide := func(c metav1.Condition) {
		if !decided {
			first, decided = c, true
		}
	}
	for i, req := range r.MatchConditions {
		cond, ok := m.condition(req)
		if !ok {
			return noMatches(fmt.Sprintf("matchConditions[%d]: condition [%s] is not %s", i, req.Type, req.Status))
		}
		if c, stale := staleCondition(m.object, cond); stale {
			return c
		}
		if !decided {
			decide(healthy(v1alpha1.ReasonMatchedCondition, conditionMessage(cond)))
		}
	}
	for i, req := range r.MatchFields {
		value, ok, c := m.field("healthy", i, req)
		switch {
		case c != nil:
			return *c
		case !ok:
			return noMatches(fmt.Sprintf("matchFields[%d]: key [%s] operator %s", i, req.Key, req.Operator))
		case !decided:
			msg, c := m.message("healthy", i, req.MessagePath)
			if c != nil {
				return *c
			}
			decide(healthy(v1alpha1.ReasonMatchedField, fieldMessage(value, msg)))
		}
	}
	for i, req := range r.MatchCEL {
		ok, c := m.expression("healthy", i, req)
		switch {
		case c != nil:
			return *c
		case !ok:
			return noMatches(fmt.Sprintf("matchCEL[%d]: %q is false", i, req.Expression))
		case !decided:
			decide(healthy(v1alpha1.ReasonMatchedExpression, m.expressionMessage(req)))
		}
	}
	if !decided { // a healthy side without matchers never holds
		return noMatches("the healthy side has no matchers")
	}
	return first
}

func noMatches(detail string) metav1.Condition {
	return unknown(v1alpha1.ReasonNoMatchesFulfilled,
		"no healthy or unhealthy matchers were fulfilled; first unfulfilled healthy matcher: "+detail)
}

// condition returns the object's condition of the requirement's type when its status is the
// required one.
func (m *matcher) condition(req v1alpha1.ConditionRequirement) (objectCondition, bool) {
	cond, ok := findCondition(m.obj, req.Type)
	if !ok || cond.str("status") != string(req.Status) {
		return nil, false
	}
	return cond, true
}

func conditionMessage(cond objectCondition) string {
	return "condition status: " + cond.str("status") + ", message: " + cond.str("message")
}

func fieldMessage(value, message string) string {
	return "field value: " + value + ", message: " + message
}

// field evaluates one matchFields requirement with expr.MatchField, the rule selectors share, and
// returns the value it reports: In and NotIn compare each non-null value's string form, and a key
// that cannot be read (a missing key, an index out of range) has no value, so only DoesNotExist
// holds for it and reports "<none>". A non-nil condition means the requirement itself is unusable.
func (m *matcher) field(side string, i int, req v1alpha1.HealthMatchFieldSelectorRequirement) (string, bool, *metav1.Condition) {
	path, err := expr.ParsePath(req.Key)
	if err != nil {
		c := unknown(v1alpha1.ReasonInvalidHealthRule, fmt.Sprintf("%s.multiMatch.%s.matchFields[%d].key: %v", m.ruleField, side, i, err))
		return "", false, &c
	}
	values, _ := path.Find(m.obj)
	ok, shown, err := expr.MatchField(req.Operator, req.Values, values)
	if err != nil {
		c := unknown(v1alpha1.ReasonInvalidHealthRule, fmt.Sprintf("%s.multiMatch.%s.matchFields[%d].operator: unknown operator %q", m.ruleField, side, i, req.Operator))
		return "", false, &c
	}
	if req.Operator == v1alpha1.FieldSelectorOpDoesNotExist {
		shown = noValue
	}
	return shown, ok, nil
}

// message reads a matchFields messagePath: the string form of the first non-null value at the
// path, or "" when the path is empty or has no such value.
func (m *matcher) message(side string, i int, messagePath string) (string, *metav1.Condition) {
	if messagePath == "" {
		return "", nil
	}
	path, err := expr.ParsePath(messagePath)
	if err != nil {
		c := unknown(v1alpha1.ReasonInvalidHealthRule, fmt.Sprintf("%s.multiMatch.%s.matchFields[%d].messagePath: %v", m.ruleField, side, i, err))
		return "", &c
	}
	values, _ := path.Find(m.obj)
	_, shown, _ := expr.MatchField(v1alpha1.FieldSelectorOpExists, nil, values)
	return shown, nil
}

func (m *matcher) scope() *expr.Scope {
	if m.s == nil {
		m.s = expr.NewScope(m.obj)
	}
	return m.s
}

// expression evaluates one matchCEL expression. Missing data makes it false; any other error is
// returned as the condition to report.
func (m *matcher) expression(side string, i int, req v1alpha1.CELMatch) (bool, *metav1.Condition) {
	field := func() string { return fmt.Sprintf("%s.multiMatch.%s.matchCEL[%d].expression", m.ruleField, side, i) }
	p, err := expr.CompileCEL(req.Expression, expr.ResultBool)
	if err != nil {
		c := unknown(v1alpha1.ReasonInvalidHealthRule, field()+": "+err.Error())
		return false, &c
	}
	ok, err := p.EvalBool(m.scope())
	switch {
	case errors.Is(err, expr.ErrMissingData):
		return false, nil
	case err != nil:
		c := unknown(v1alpha1.ReasonHealthRuleEvaluationFailed, field()+": "+err.Error())
		return false, &c
	}
	return ok, nil
}

// expressionMessage is the message of a matchCEL entry that decided: its messageExpression's
// result, or the expression itself when there is none. A messageExpression that fails leaves the
// verdict standing and reports its error in the message.
func (m *matcher) expressionMessage(req v1alpha1.CELMatch) string {
	if req.MessageExpression == "" {
		return req.Expression
	}
	p, err := expr.CompileCEL(req.MessageExpression, expr.ResultString)
	if err == nil {
		var msg string
		if msg, err = p.EvalString(m.scope()); err == nil {
			return msg
		}
	}
	return fmt.Sprintf("%s (messageExpression failed: %v)", req.Expression, err)
}
