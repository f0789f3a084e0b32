package workitems

import (
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/expr"
	"github.com/surveyor-dev/surveyor/pkg/health"
)

// MessageNoObject is the message of every rule condition while there is no stamped object to judge.
const MessageNoObject = "waiting for the object to be stamped"

// reservedConditions are the conditions Surveyor sets itself on a resource or an owner. The CRD
// forbids rules for them; Validate rejects them and Evaluate skips them, so that a rule that did
// not come through the API server cannot fight the realizer over one.
var reservedConditions = []string{
	v1alpha1.ConditionReady, v1alpha1.ConditionHealthy, v1alpha1.ConditionResourceSubmitted,
	v1alpha1.ConditionSupplyChainReady, v1alpha1.ConditionDeliveryReady, v1alpha1.ConditionResourcesSubmitted,
	v1alpha1.ConditionResourcesHealthy, v1alpha1.ConditionAvailable,
}

// Evaluate judges the stamped object under the rules and returns one condition per condition type
// (rule.ConditionType(), so a WellKnownCompletions rule without a condition sets Complete), in the
// order the types first appear in rules. It never sets LastTransitionTime or ObservedGeneration.
//
// scope is the object's CEL scope; pass the one the object's health rule used so that both share
// the object's cost budget. A nil scope makes Evaluate create one (with the default budget) when a
// rule needs CEL.
//
// One rule:
//
//   - No object (obj is nil): Unknown NoStampedObject, MessageNoObject, whatever the rule.
//   - CEL: the expressions are ANDed in order. Each must give a bool or a map {status?, reason,
//     message} (see the map rules below). All true: True ConditionRulesPassed "Resource is <C>";
//     the first false one decides: False ConditionRulesFailed "Resource is not <C>". An Unknown
//     from a map result makes the rule Unknown unless a later expression is false or fails. The
//     first expression that cannot be evaluated (does not compile, missing key, over the cost limit
//     or the object's budget, wrong result type) makes the rule False ConditionRulesFailed "failed
//     to evaluate: <error>", the error quoting the expression; expressions after the first false
//     or failed one are not evaluated, so they cost no budget.
//   - WellKnownCompletions: the verdict of JobVerdict or PodVerdict; a finished Job or Pod, whether
//     it succeeded or failed, is True ConditionRulesPassed with a message naming what decided, e.g.
//     "Job failed: FailureTarget (BackoffLimitExceeded)"; an unfinished one is False
//     ConditionRulesFailed "Job is not <C>"; any other kind is False ConditionRulesFailed
//     "WellKnownCompletions does not know kind <Kind> (<apiVersion>); use a CEL rule".
//   - MessageExpression, when set, replaces the message whenever the rule was evaluated, whatever
//     its status (True, False or Unknown), and also replaces a map result's message. It does not
//     replace the message of a rule that failed to evaluate, of an unknown kind or of a missing
//     object: those say what is wrong. When the messageExpression itself fails, the status and
//     reason stand and the message is "failed to evaluate messageExpression: <error>".
//
// A map result: status is true, false, "True", "False" or "Unknown" and defaults to False when
// absent (fail-safe: a rule for Complete freezes the resource for good, so a map that forgets its
// status must not complete it; this also reproduces seed 000's example, where a status-less
// {reason: CountNotReached, ...} gives status False). reason must be a valid condition reason and
// defaults to ConditionRulesPassed for True and ConditionRulesFailed otherwise; message defaults
// to the messages above, and to "Resource is not known to be <C>" for Unknown. An empty reason or
// message counts as absent. Any other key, a non-string reason or message, or a bad status is an
// evaluation error. When all expressions hold, the first map result sets the reason and message;
// when one is false (or, with none false, Unknown), that one does.
//
// Several rules with the same condition type are ANDed into one condition: False when any rule
// is False, otherwise Unknown when any is Unknown, otherwise True. The first rule with that
// resulting status gives the reason and message. Rules with an empty or reserved condition type
// (which Validate rejects) are skipped.
func Evaluate(rules []v1alpha1.ConditionRule, obj *unstructured.Unstructured, scope *expr.Scope) []metav1.Condition {
	if len(rules) == 0 {
		return nil
	}
	e := evaluator{obj: obj, scope: scope}
	var order []string
	byType := make(map[string][]metav1.Condition, len(rules))
	for _, r := range rules {
		t := r.ConditionType()
		if t == "" || slices.Contains(reservedConditions, t) {
			continue
		}
		if _, seen := byType[t]; !seen {
			order = append(order, t)
		}
		byType[t] = append(byType[t], e.rule(r))
	}
	out := make([]metav1.Condition, 0, len(order))
	for _, t := range order {
		c := and(byType[t])
		c.Type = t
		c.Message = health.TruncateMessage(c.Message)
		out = append(out, c)
	}
	return out
}

// and combines the conditions of the rules for one type: the worst status wins (False, then
// Unknown, then True) and the first rule with that status gives reason and message.
func and(conds []metav1.Condition) metav1.Condition {
	for _, want := range []metav1.ConditionStatus{metav1.ConditionFalse, metav1.ConditionUnknown} {
		for _, c := range conds {
			if c.Status == want {
				return c
			}
		}
	}
	return conds[0]
}

// evaluator judges the rules of one object.
type evaluator struct {
	obj   *unstructured.Unstructured
	scope *expr.Scope // created on the first CEL use unless the caller gave one
}

func (e *evaluator) scopeFor() *expr.Scope {
	if e.scope == nil {
		e.scope = expr.NewScope(e.obj.Object)
	}
	return e.scope
}

// rule judges the object under one rule. The condition it returns has no type.
func (e *evaluator) rule(r v1alpha1.ConditionRule) metav1.Condition {
	if e.obj == nil {
		return condition(metav1.ConditionUnknown, v1alpha1.ReasonNoStampedObject, MessageNoObject)
	}
	var c metav1.Condition
	var evaluated bool
	switch r.Type {
	case v1alpha1.ConditionRuleTypeCEL:
		c, evaluated = e.cel(r)
	case v1alpha1.ConditionRuleTypeWellKnownCompletions:
		c, evaluated = wellKnown(e.obj, r.ConditionType())
	default:
		c = failed(fmt.Sprintf("unknown condition rule type %q", r.Type))
	}
	if evaluated && r.MessageExpression != "" {
		c.Message = e.message(r.MessageExpression)
	}
	return c
}

// cel ANDs the rule's expressions and reports whether they could be evaluated.
func (e *evaluator) cel(r v1alpha1.ConditionRule) (metav1.Condition, bool) {
	cond := r.ConditionType()
	if len(r.CELExpressions) == 0 {
		return failed("failed to evaluate: the rule has no celExpressions"), false
	}
	var firstMap, firstUnknown *outcome
	for _, x := range r.CELExpressions {
		o, err := e.expression(x.Expression)
		if err != nil {
			return failed("failed to evaluate: " + err.Error()), false
		}
		switch {
		case o.status == metav1.ConditionFalse:
			return o.condition(cond), true
		case o.status == metav1.ConditionUnknown && firstUnknown == nil:
			firstUnknown = &o
		case o.status == metav1.ConditionTrue && o.isMap && firstMap == nil:
			firstMap = &o
		}
	}
	switch {
	case firstUnknown != nil:
		return firstUnknown.condition(cond), true
	case firstMap != nil:
		return firstMap.condition(cond), true
	}
	return outcome{status: metav1.ConditionTrue}.condition(cond), true
}

func (e *evaluator) expression(expression string) (outcome, error) {
	p, err := expr.CompileCEL(expression, expr.ResultAny)
	if err != nil {
		return outcome{}, err
	}
	v, err := p.Eval(e.scopeFor())
	if err != nil {
		return outcome{}, err
	}
	return outcomeOf(expression, v)
}

// message evaluates a messageExpression.
func (e *evaluator) message(expression string) string {
	p, err := expr.CompileCEL(expression, expr.ResultString)
	if err == nil {
		var msg string
		if msg, err = p.EvalString(e.scopeFor()); err == nil {
			return msg
		}
	}
	return "failed to evaluate messageExpression: " + err.Error()
}

func condition(status metav1.ConditionStatus, reason, message string) metav1.Condition {
	return metav1.Condition{Status: status, Reason: reason, Message: message}
}

func passed(message string) metav1.Condition {
	return condition(metav1.ConditionTrue, v1alpha1.ReasonConditionRulesPassed, message)
}

func failed(message string) metav1.Condition {
	return condition(metav1.ConditionFalse, v1alpha1.ReasonConditionRulesFailed, message)
}
