package expr

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/ext"
	"github.com/google/cel-go/interpreter"
	"k8s.io/apiserver/pkg/cel/library"
)

// CELObjectVariable is the name of the one variable every expression sees: the stamped object.
const CELObjectVariable = "object"

// Limits of CEL evaluation. Every evaluation runs under both per-call limits, whatever the
// expression and the object: cel-go's runtime cost tracker stops it when its cost goes over
// CELCallCostLimit, and an interrupt check stops it when it runs longer than CELCallTimeLimit.
// Costs are in cel-go's units (about one per operation, plus the size of the strings and lists
// that functions walk); the cost limits match the Kubernetes API server's for validation rules.
const (
	// CELCallCostLimit is the most one evaluation of one expression may cost. An expression that
	// goes over it is stopped and gives ErrCostLimitExceeded.
	CELCallCostLimit uint64 = 1_000_000
	// CELCallTimeLimit is the longest one evaluation may run. An expression still running then is
	// stopped and gives ErrCostLimitExceeded. The cost limit alone does not bound time: cel-go's
	// tracker is quadratic in the length of a comprehension, so lists.range(100000).all(i, true)
	// costs 400,004 but ran for tens of seconds (testdata/fuzz/FuzzCELEval). 100 ms is far above what
	// a health or completion expression takes (microseconds) even on a loaded machine, and short
	// enough that a bad expression cannot hold up a reconcile.
	CELCallTimeLimit = 100 * time.Millisecond
	// CELObjectCostBudget is the default budget of a Scope: the most all the expressions evaluated
	// for one object may cost together.
	CELObjectCostBudget uint64 = 10_000_000
)

// celInterruptCheckFrequency is how many comprehension steps run between two checks of the time
// limit: every one. cel-go counts the checks of all the comprehensions of an evaluation together,
// and an interrupted comprehension stops only itself (it evaluates to an error the one around it
// carries on with), so with a check every 100 steps an outer comprehension ran on after the
// deadline until one of its own steps fell on a multiple of 100; with nested comprehensions that
// took as long as the cost limit. A check is a non-blocking receive from a channel.
const celInterruptCheckFrequency = 1

// ResultType is the type an expression must produce.
type ResultType int

const (
	// ResultAny accepts any result, e.g. a bool or a map {status?, reason, message}.
	ResultAny ResultType = iota
	// ResultBool requires a bool, e.g. a matchCEL expression.
	ResultBool
	// ResultString requires a string, e.g. a messageExpression.
	ResultString
)

// String returns "bool", "string" or "any".
func (r ResultType) String() string {
	switch r {
	case ResultBool:
		return "bool"
	case ResultString:
		return "string"
	default:
		return "any"
	}
}

// Errors of CEL compilation and evaluation. Every error returned by CompileCEL and by the Program
// methods quotes the expression, and errors.Is matches exactly one of these.
var (
	// ErrInvalidExpression means the expression does not compile, or its type cannot be the one
	// required.
	ErrInvalidExpression = errors.New("invalid expression")
	// ErrMissingData means the expression read something the object does not have (yet): a missing
	// key or attribute, or an index out of range. Callers treat it as "not there yet", not as a fault
	// of the expression; health treats such a matcher as not holding.
	ErrMissingData = errors.New("missing data")
	// ErrCostLimitExceeded means one evaluation went over CELCallCostLimit or CELCallTimeLimit, or
	// that a call was refused before it ran because what it would make is over CELMaxListSize,
	// CELMaxStringSize or CELMaxRegexSize (the message names the limit); a constant pattern over
	// CELMaxRegexSize is refused by CompileCEL with this kind too.
	ErrCostLimitExceeded = errors.New("cost limit exceeded")
	// ErrBudgetExhausted means the expressions evaluated for one object used up its Scope's budget.
	ErrBudgetExhausted = errors.New("per-object cost budget exhausted")
	// ErrResultType means the result had the wrong type, e.g. a string where a bool was required.
	ErrResultType = errors.New("wrong result type")
	// ErrEvaluation is any other evaluation error, e.g. a division by zero or a failed conversion.
	ErrEvaluation = errors.New("evaluation failed")
)

// ExpressionError is an error about one CEL expression. Its message quotes the expression, and
// errors.Is matches its Kind. Packages that judge an expression's result (condition rules' map
// results) return it too, so every expression error reads alike.
type ExpressionError struct {
	// Expression is the expression as the user wrote it.
	Expression string
	// Kind is one of this package's sentinels, e.g. ErrResultType.
	Kind error
	// Detail says what is wrong.
	Detail string
}

// Error returns `expression "<expression>": <detail>`.
func (e *ExpressionError) Error() string {
	return fmt.Sprintf("expression %q: %s", e.Expression, e.Detail)
}

// Unwrap returns Kind.
func (e *ExpressionError) Unwrap() error { return e.Kind }

// Program is a compiled CEL expression over `object`. Programs are compiled once per expression
// text and cached; a Program is safe for concurrent use.
//
// There are two cel.Programs per expression, planned from the same AST with the same guard on
// every call that allocates: program, with cel-go's cost tracker, cost limit and interrupt check,
// and untracked, with none of them. An evaluation runs untracked only when the expression's
// static bound (see staticCost) says that neither the cost limit nor the scope's budget could
// stop it; static is nil when the expression has no such bound, and every evaluation is tracked.
type Program struct {
	expression string
	output     *cel.Type
	program    cel.Program
	untracked  cel.Program
	static     *staticCost
}

// compiled is a cache entry; once makes concurrent first uses compile the expression once.
type compiled struct {
	once    sync.Once
	program *Program
	err     error
}

// maxCachedPrograms bounds the program cache. Expressions come from templates, so the live set is
// what platform teams write; a compiled program is tens of kilobytes, so the bound is lower than
// the path cache's.
const maxCachedPrograms = 2048

var (
	celCache    = newCache[*compiled](maxCachedPrograms)
	celCompiles atomic.Uint64
	celEnv      = sync.OnceValues(newCELEnv)
	// celEvaluations, celCost and celStopped count the evaluations run (not those a scope
	// remembered), the cost charged for them, and those stopped at a limit.
	celEvaluations, celCost, celStopped atomic.Uint64
)

// CELEvaluations returns how many CEL evaluations ran since the process started, the cost
// charged for them in cel-go's units, and how many were stopped at a limit (cost, time, size).
func CELEvaluations() (evaluations, cost, stopped uint64) {
	return celEvaluations.Load(), celCost.Load(), celStopped.Load()
}

// celEnvironment is the one environment every expression is compiled in, with the dispatcher
// guardDecorator finds the guarded functions' implementations in.
type celEnvironment struct {
	env  *cel.Env
	disp interpreter.Dispatcher
}

// CELCompileCount returns how many expressions were compiled since the process started. It grows
// when a new expression text is seen, and stays flat in steady state.
func CELCompileCount() uint64 { return celCompiles.Load() }

// CompileCEL returns the Program for expression, compiling it on first use, and checks that its
// type can be want. The cache is keyed by the expression text alone and also remembers expressions
// that fail to compile, so an invalid expression costs one compilation, not one per reconcile. The
// type check runs on every call: it reads the cached output type and costs nothing. The cache holds
// at most maxCachedPrograms expressions and evicts the least recently used.
//
// An expression over `object` usually has type dyn, because the object has no schema; dyn passes
// the check here and the result is checked again when the Program is evaluated.
func CompileCEL(expression string, want ResultType) (*Program, error) {
	cc, ok := celCache.get(expression)
	if !ok {
		cc = celCache.add(expression, &compiled{})
	}
	cc.once.Do(func() { cc.program, cc.err = compileCEL(expression) })
	if cc.err != nil {
		return nil, cc.err
	}
	if err := cc.program.checkOutput(want); err != nil {
		return nil, err
	}
	return cc.program, nil
}

// compileCEL compiles expression. cel-go's parser, checker and planner run user text, and the
// planner evaluates constant conversions and list literals while it plans; a panic in any of them
// (a bug of cel-go or of a library, found by FuzzCELEval) is this expression's error, not the
// controller's crash, and is cached like any other so the expression is not compiled again.
func compileCEL(expression string) (program *Program, err error) {
	celCompiles.Add(1)
	defer func() {
		if r := recover(); r != nil {
			program, err = nil, &ExpressionError{Expression: expression, Kind: ErrInvalidExpression,
				Detail: fmt.Sprintf("the CEL compiler failed: %v", r)}
		}
	}()
	ce, err := celEnv()
	if err != nil {
		// The environment is fixed at build time; this is a bug, not bad input.
		return nil, &ExpressionError{Expression: expression, Kind: ErrInvalidExpression, Detail: "CEL environment: " + err.Error()}
	}
	ast, iss := ce.env.Compile(expression)
	if iss != nil && iss.Err() != nil {
		return nil, &ExpressionError{Expression: expression, Kind: ErrInvalidExpression, Detail: iss.Err().Error()}
	}
	// The planner compiles constant patterns; the guard checks them first, as it checks the
	// others before each call.
	if err := checkConstantRegexes(ast.NativeRep().Expr()); err != nil {
		return nil, &ExpressionError{Expression: expression, Kind: ErrCostLimitExceeded, Detail: err.Error()}
	}
	prg, err := ce.env.Program(ast,
		cel.CustomDecorator(guardDecorator(ce.disp)),
		cel.EvalOptions(cel.OptOptimize),
		cel.CostTracking(costEstimator{}),
		cel.CostLimit(CELCallCostLimit),
		cel.InterruptCheckFrequency(celInterruptCheckFrequency),
	)
	if err != nil {
		return nil, &ExpressionError{Expression: expression, Kind: ErrInvalidExpression, Detail: err.Error()}
	}
	p := &Program{expression: expression, output: ast.OutputType(), program: prg}
	if p.static = newStaticCost(ce.env, expression); p.static != nil {
		p.untracked, err = ce.env.Program(ast,
			cel.CustomDecorator(guardDecorator(ce.disp)),
			cel.EvalOptions(cel.OptOptimize),
			cel.InterruptCheckFrequency(celInterruptCheckFrequency),
		)
		if err != nil {
			return nil, &ExpressionError{Expression: expression, Kind: ErrInvalidExpression, Detail: err.Error()}
		}
	}
	return p, nil
}

func (p *Program) checkOutput(want ResultType) error {
	var required *cel.Type
	switch want {
	case ResultBool:
		required = cel.BoolType
	case ResultString:
		required = cel.StringType
	default:
		return nil
	}
	if p.output.Kind() == types.DynKind || p.output.IsExactType(required) {
		return nil
	}
	return &ExpressionError{Expression: p.expression, Kind: ErrInvalidExpression,
		Detail: fmt.Sprintf("must evaluate to %s, but has type %s", want, p.output)}
}

// String returns the expression text.
func (p *Program) String() string { return p.expression }

// EvalBool evaluates the expression against the scope's object and requires a bool.
func (p *Program) EvalBool(s *Scope) (bool, error) {
	v, err := p.eval(s)
	if err != nil {
		return false, err
	}
	b, ok := v.(types.Bool)
	if !ok {
		return false, p.wrongType(ResultBool, v)
	}
	return bool(b), nil
}

// EvalString evaluates the expression against the scope's object and requires a string.
func (p *Program) EvalString(s *Scope) (string, error) {
	v, err := p.eval(s)
	if err != nil {
		return "", err
	}
	str, ok := v.(types.String)
	if !ok {
		return "", p.wrongType(ResultString, v)
	}
	return string(str), nil
}

// Eval evaluates the expression against the scope's object and returns its result as a plain Go
// value: bool, int64, uint64, float64, string, []byte, nil, []any, or map[string]any (string keys
// only), with optionals unwrapped (an empty optional is nil) and other values, such as timestamps,
// durations and quantities, in their string form. Condition rules use it to accept a bool or a map
// {status?, reason, message}.
func (p *Program) Eval(s *Scope) (any, error) {
	v, err := p.eval(s)
	if err != nil {
		return nil, err
	}
	native, err := toNative(v)
	if err != nil {
		return nil, &ExpressionError{Expression: p.expression, Kind: ErrResultType, Detail: err.Error()}
	}
	return native, nil
}

func (p *Program) wrongType(want ResultType, v ref.Val) error {
	return &ExpressionError{Expression: p.expression, Kind: ErrResultType,
		Detail: fmt.Sprintf("must evaluate to %s, but evaluated to %s", want, v.Type().TypeName())}
}

// newCELEnv builds the one environment every expression is compiled in, and a dispatcher of its
// functions' implementations, as cel-go builds one for every program.
func newCELEnv() (celEnvironment, error) {
	base, err := cel.NewEnv(celEnvOptions()...)
	if err != nil {
		return celEnvironment{}, err
	}
	env, err := base.Extend(cel.CustomTypeAdapter(jsonAdapter{next: base.CELTypeAdapter()}))
	if err != nil {
		return celEnvironment{}, err
	}
	disp := interpreter.NewDispatcher()
	for _, fn := range env.Functions() {
		bindings, err := fn.Bindings()
		if err != nil {
			return celEnvironment{}, err
		}
		if err := disp.Add(bindings...); err != nil {
			return celEnvironment{}, err
		}
	}
	return celEnvironment{env: env, disp: disp}, nil
}

// Parser limits. An expression is a rule in a template, a line or a few; the limits bound the
// time and memory of compiling one (the planner also builds constant lists and conversions
// then, with no cost tracking), far above any real rule. cel-go's defaults are 100,000 code
// points and a depth of 250.
const (
	// CELMaxExpressionSize is the most code points an expression may have.
	CELMaxExpressionSize = 10_000
	// celMaxRecursionDepth is the deepest an expression may nest.
	celMaxRecursionDepth = 64
)

func celEnvOptions() []cel.EnvOption {
	// Version 2 of ext.Lists has every function of the latest version; version 3 adds only cost
	// trackers, which cel-go installs as a map built anew for every evaluation. costEstimator
	// charges the same costs without the map (see listCallCost).
	return envOptions(ext.Lists(ext.ListsVersion(2)))
}

// envOptions are the environment's options with the given ext.Lists.
func envOptions(lists cel.EnvOption) []cel.EnvOption {
	return []cel.EnvOption{
		cel.ParserExpressionSizeLimit(CELMaxExpressionSize),
		cel.ParserRecursionLimit(celMaxRecursionDepth),
		cel.Variable(CELObjectVariable, cel.MapType(cel.StringType, cel.DynType)),
		cel.OptionalTypes(),
		cel.CrossTypeNumericComparisons(true),
		cel.DefaultUTCTimeZone(true),
		ext.Strings(),
		lists,
		ext.Sets(),
		ext.TwoVarComprehensions(),
		library.URLs(),
		library.Regex(),
		library.Lists(),
		library.Quantity(),
		library.IP(),
		library.CIDR(),
		library.Format(),
		library.SemverLib(library.SemverVersion(1)),
		indexesLibrary(),
	}
}
