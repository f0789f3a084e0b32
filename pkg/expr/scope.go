package expr

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"github.com/google/cel-go/interpreter"
)

// Scope is one object prepared for CEL evaluation: the activation that binds `object`, built once,
// and the cost budget shared by every expression evaluated for that object. Create one Scope per
// object and per reconcile, and pass it to every evaluation for that object (health and condition
// rules alike). A Scope is not safe for concurrent use.
type Scope struct {
	activation objectActivation
	remaining  uint64
	budget     uint64
	results    *objectResults // nil when the object does not say which version it is
}

// NewScope returns a Scope for object, usually an unstructured object's content, with the default
// budget CELObjectCostBudget.
func NewScope(object map[string]any) *Scope {
	return NewScopeWithBudget(object, CELObjectCostBudget)
}

// NewScopeWithBudget returns a Scope for object whose expressions may cost budget in total.
func NewScopeWithBudget(object map[string]any, budget uint64) *Scope {
	if object == nil {
		object = map[string]any{}
	}
	return &Scope{activation: objectActivation{object: object}, remaining: budget, budget: budget, results: memo.forObject(object)}
}

// Remaining returns the budget the scope has left.
func (s *Scope) Remaining() uint64 { return s.remaining }

// objectActivation resolves the single variable `object` without a map lookup or allocation. It
// binds the plain map, not a CEL value: cel-go then selects fields on the Go map directly and only
// converts the values an expression actually reads.
type objectActivation struct {
	object any
}

func (a *objectActivation) ResolveName(name string) (any, bool) {
	if name == CELObjectVariable {
		return a.object, true
	}
	return nil, false
}

func (a *objectActivation) Parent() interpreter.Activation { return nil }

// timeLimit is the per-call time limit in nanoseconds: CELCallTimeLimit, unless a test set
// another (setCallTimeLimit). Atomic, as evaluations may run while a test sets it.
var timeLimit atomic.Int64

func init() { timeLimit.Store(int64(CELCallTimeLimit)) }

// callTimeLimit is the per-call time limit.
func callTimeLimit() time.Duration { return time.Duration(timeLimit.Load()) }

// setCallTimeLimit makes limit the per-call time limit in place of CELCallTimeLimit, and
// returns the function that restores the one before. It is for tests: one whose expression
// must reach the cost limit sets a limit far beyond what the evaluation takes on a loaded
// machine (a goroutine that is not scheduled for 100 ms is not rare there), so that the time
// limit cannot win the race; one that wants the time limit with a cheap expression lowers it
// (zero: out of time before the evaluation starts).
func setCallTimeLimit(limit time.Duration) (restore func()) {
	old := timeLimit.Swap(int64(limit))
	return func() { timeLimit.Store(old) }
}

// eval runs the program under its per-call limits and charges its cost to the scope.
//
// The program stops itself when its cost goes over CELCallCostLimit (cel-go's tracker) or when it
// runs longer than CELCallTimeLimit (cel-go's interrupt check, which every comprehension step
// consults, watching a context with that deadline). A stopped evaluation is charged the whole
// per-call cost limit; any other is charged its actual cost afterwards.
// So one evaluation can overrun the scope's budget by at most the per-call limit, and every later
// evaluation for the same object fails at once.
//
// When the scope's object version was evaluated before, the program's result is taken from the
// memo and charged as if it had run again, so the budget means the same with or without it.
func (p *Program) eval(s *Scope) (ref.Val, error) {
	if s == nil {
		return nil, &ExpressionError{Expression: p.expression, Kind: ErrEvaluation, Detail: "no object to evaluate against"}
	}
	if s.remaining == 0 {
		return nil, p.budgetError(s)
	}
	r, ok := s.results.get(p)
	if !ok {
		r = p.run(s)
		s.results.put(p, r)
		celEvaluations.Add(1)
		celCost.Add(r.cost)
		if r.stopped {
			celStopped.Add(1)
		}
	}
	if r.stopped {
		s.charge(r.cost)
		return nil, r.err
	}
	if !s.charge(r.cost) {
		return nil, p.budgetError(s)
	}
	return r.val, r.err
}

// run evaluates the program over the scope's object once, under its per-call limits. When the
// expression's static bound at the sizes of what it reads is within the per-call cost limit and
// the scope's remaining budget, the tracker could not stop the evaluation: it runs untracked and
// is charged the bound, which is at least what the tracker would have counted (see staticCost).
// Otherwise it runs tracked and is charged what the tracker counted.
func (p *Program) run(s *Scope) outcome {
	if p.static != nil {
		if n, ok := p.static.paths.measure(s.activation.object); ok {
			if bound, ok := p.static.bound(n); ok && bound <= s.remaining {
				return p.runUntracked(s, bound)
			}
		}
	}
	return p.runTracked(s)
}

// runUntracked evaluates the untracked program and charges bound. The guard still refuses calls
// that would allocate too much, and the time limit still holds.
func (p *Program) runUntracked(s *Scope, bound uint64) outcome {
	deadline := startDeadline(callTimeLimit())
	out, _, err := p.untracked.ContextEval(deadline, &s.activation)
	timedOut := err != nil && deadline.Err() != nil
	deadline.release()
	if r, stopped := p.stopped(err, timedOut); stopped {
		return r
	}
	if err != nil {
		return outcome{cost: bound, err: p.classify(err)}
	}
	return outcome{cost: bound, val: out}
}

// runTracked evaluates the tracked program, which stops at the per-call cost limit.
func (p *Program) runTracked(s *Scope) outcome {
	deadline := startDeadline(callTimeLimit())
	out, details, err := p.program.ContextEval(deadline, &s.activation)
	timedOut := err != nil && deadline.Err() != nil
	deadline.release()
	if r, stopped := p.stopped(err, timedOut); stopped {
		return r
	}
	var cost uint64
	if details != nil && details.ActualCost() != nil {
		cost = *details.ActualCost()
	}
	if err != nil {
		return outcome{cost: cost, err: p.classify(err)}
	}
	return outcome{cost: cost, val: out}
}

// stopped returns the outcome of an evaluation that a limit stopped, charged the whole per-call
// cost limit, and whether err says one did.
func (p *Program) stopped(err error, timedOut bool) (outcome, bool) {
	if err == nil {
		return outcome{}, false
	}
	var cancelled interpreter.EvalCancelledError
	var refused *limitError
	switch {
	case errors.As(err, &refused):
		// A call refused before it ran, whether or not the time ran out meanwhile: charged like
		// an evaluation the cost limit stopped, since that is what it would have come to.
		return outcome{stopped: true, cost: CELCallCostLimit, err: &ExpressionError{Expression: p.expression,
			Kind: ErrCostLimitExceeded, Detail: refused.Error()}}, true
	case errors.As(err, &cancelled) && cancelled.Cause == interpreter.CostLimitExceeded:
		return outcome{stopped: true, cost: CELCallCostLimit, err: &ExpressionError{Expression: p.expression,
			Kind: ErrCostLimitExceeded, Detail: fmt.Sprintf("cost limit of %d exceeded by one evaluation", CELCallCostLimit)}}, true
	case timedOut:
		// An interrupted comprehension evaluates to an error ("operation interrupted") that
		// cel-go does not type; an error once the time is up is the interruption's, or close
		// enough to it that calling it a timeout is true.
		return outcome{stopped: true, timedOut: true, cost: CELCallCostLimit, err: &ExpressionError{Expression: p.expression,
			Kind: ErrCostLimitExceeded, Detail: fmt.Sprintf("evaluation stopped after %s", callTimeLimit())}}, true
	}
	return outcome{}, false
}

// charge takes cost from the remaining budget and reports whether it was there to take.
func (s *Scope) charge(cost uint64) bool {
	if cost > s.remaining {
		s.remaining = 0
		return false
	}
	s.remaining -= cost
	return true
}

func (p *Program) budgetError(s *Scope) error {
	return &ExpressionError{Expression: p.expression, Kind: ErrBudgetExhausted,
		Detail: fmt.Sprintf("the expressions for this object used up their cost budget of %d", s.budget)}
}

// classify decides, in this one place, whether an evaluation error means the data is not there yet
// (ErrMissingData) or that the evaluation failed (ErrEvaluation). cel-go reports a missing map key,
// a missing attribute and an index out of range with these messages and no exported type.
func (p *Program) classify(err error) error {
	msg := err.Error()
	kind := ErrEvaluation
	for _, prefix := range []string{"no such key", "no such attribute", "index out of bounds"} {
		if strings.HasPrefix(msg, prefix) {
			kind = ErrMissingData
			break
		}
	}
	return &ExpressionError{Expression: p.expression, Kind: kind, Detail: msg}
}

// toNative turns a CEL value into a plain Go value, see Program.Eval.
func toNative(v ref.Val) (any, error) {
	switch x := v.(type) {
	case types.Bool:
		return bool(x), nil
	case types.Int:
		return int64(x), nil
	case types.Uint:
		return uint64(x), nil
	case types.Double:
		return float64(x), nil
	case types.String:
		return string(x), nil
	case types.Bytes:
		return []byte(x), nil
	case types.Null:
		return nil, nil
	case *types.Optional:
		if !x.HasValue() {
			return nil, nil
		}
		return toNative(x.GetValue())
	case traits.Mapper:
		out := make(map[string]any)
		for it := x.Iterator(); it.HasNext() == types.True; {
			k := it.Next()
			key, ok := k.(types.String)
			if !ok {
				return nil, fmt.Errorf("map key %v has type %s, want string", k, k.Type().TypeName())
			}
			val, err := toNative(x.Get(k))
			if err != nil {
				return nil, err
			}
			out[string(key)] = val
		}
		return out, nil
	case traits.Lister:
		n, _ := x.Size().(types.Int)
		out := make([]any, 0, int(n))
		for it := x.Iterator(); it.HasNext() == types.True; {
			val, err := toNative(it.Next())
			if err != nil {
				return nil, err
			}
			out = append(out, val)
		}
		return out, nil
	}
	if s, ok := v.ConvertToType(types.StringType).(types.String); ok {
		return string(s), nil
	}
	return nil, fmt.Errorf("result of type %s cannot be used", v.Type().TypeName())
}
