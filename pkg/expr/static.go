package expr

import (
	"math"
	"math/bits"
	"sync"
	"sync/atomic"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/ext"
	"k8s.io/apiserver/pkg/cel/library"
)

// Static cost bounds, as the Kubernetes API server uses them: cel-go's checker estimates, from an
// expression's text alone, the most one evaluation can cost given the sizes of the values it reads.
// An evaluation whose bound is within both the per-call cost limit (celUntrackedCostLimit, lower
// still) and the scope's remaining budget cannot be stopped by the cost tracker, so it runs
// without one (cel-go's tracker observes every step, a large part of a typical evaluation;
// docs/performance.md, "Expression benchmarks") and is charged its bound.
//
// The API server knows its sizes from an OpenAPI schema; an object here has none, so the sizes
// come from the object itself. At compile time the estimate records every path into `object`
// whose size it needs (object.status.conditions, object.status.conditions.@items.type, ...).
// Before an evaluation, staticCost.measure reads the largest size found at those paths, n; the
// bound is the estimate with every one of those sizes taken as n, rounded up to a power of two so
// that an expression has at most maxSizeBucket+1 estimates, each computed once.
//
// Why the charge is never below what the tracked program would have charged:
//
//   - cel-go's estimator and its runtime tracker price every step alike (cel-go keeps them in
//     step, "any changes to cost calculations in this file require a corresponding change in
//     interpreter/runtimecost.go"), except a field selection on a value of type dyn, which the
//     tracker charges and the estimator does not; the estimate is made on a copy of the AST where
//     such operands are typed as maps, which the estimator charges (see newStaticCost).
//   - The calls priced by costEstimator at run time are priced by staticEstimator.EstimateCallCost
//     at compile time with a bound of the same formula (indexes), with cel-go's own estimators for
//     version 3 of ext.Lists (what listCallCost charges), and with the Kubernetes library's
//     estimator (what its runtime CallCost charges).
//   - A size the estimate asks for is either computed by cel-go (a literal, a known call's result)
//     or is at a recorded path into `object`, and then it is at most n: measure visits every value
//     at every recorded path, following @items, @keys and @values into every element, key and
//     value; a string is measured in bytes, never fewer than its code points. A value of a type
//     measure does not know makes it give up, and the tracked program runs.
//   - Any other size is unknown, which the estimator takes as unbounded: an expression that
//     iterates lists.range(object.spec.n), or a string it builds, has no bound within the limits
//     and runs tracked, as before.
//
// TestStaticCostIsAnUpperBound holds the charge to the tracked program's actual cost.
type staticCost struct {
	// ast is the estimation copy of the expression's AST (see newStaticCost); it is only read.
	ast *cel.Ast
	// paths are the paths into `object` whose sizes the estimate asked for.
	paths *pathNode
	// bounds holds, per size bucket b (sizes up to 2^b), the estimate's maximum plus one, or
	// noBound when it is over celUntrackedCostLimit or could not be made; 0 means not computed yet.
	// Two goroutines that compute the same bucket at once store the same value.
	bounds [maxSizeBucket + 1]atomic.Uint64
}

const (
	// celUntrackedCostLimit is the largest static bound an evaluation may have to run untracked.
	// It is below CELCallCostLimit for two reasons. An untracked evaluation is charged its bound,
	// not its actual cost, so a large bound spends the scope's budget faster than the evaluation
	// does; a quarter of the per-call limit keeps that to 2.5% of the default object budget per
	// evaluation, and still admits any use of indexes(), whose bound is about 100,000 (the most
	// indexes a set may have). And an expression with a larger bound is a long one: tracked, it
	// keeps the time limit that the tracker's quadratic overhead makes it meet, e.g.
	// lists.range(100000).all(i, true) (bound 400,004) still stops after CELCallTimeLimit, as
	// the health and condition rule tests expect, instead of running 30 ms untracked.
	celUntrackedCostLimit = CELCallCostLimit / 4
	// maxSizeBucket is the largest size bucket: 2^24 elements or bytes, ten times the largest
	// object the API server stores. A larger size runs tracked.
	maxSizeBucket = 24
	// noBound marks a bucket whose estimate is over celUntrackedCostLimit.
	noBound = math.MaxUint64
)

// celCostEnv is the environment expressions' costs are estimated in: the evaluation environment's
// functions, with the latest ext.Lists, whose estimators price the list functions as listCallCost
// does at run time (see celEnvOptions for why evaluation loads version 2).
var celCostEnv = sync.OnceValues(func() (*cel.Env, error) { return cel.NewEnv(envOptions(ext.Lists())...) })

// newStaticCost prepares the static bound of expression, or returns nil when it has none: its
// estimate with the smallest sizes is already over celUntrackedCostLimit, or cannot be made.
// It compiles the expression again for an AST of its own, since it retypes that copy: cel-go's
// estimator charges a field selection only on a map or a message, and its tracker charges every
// one, so every operand of type dyn of a selection is typed map(string, dyn) in the copy. The type
// of a selection's operand is read by nothing else the estimator prices.
func newStaticCost(env *cel.Env, expression string) *staticCost {
	costEnv, err := celCostEnv()
	if err != nil {
		return nil
	}
	checked, iss := env.Compile(expression)
	if iss != nil && iss.Err() != nil {
		return nil
	}
	native := checked.NativeRep()
	typeMap := native.TypeMap()
	ast.PostOrderVisit(native.Expr(), ast.NewExprVisitor(func(e ast.Expr) {
		if e.Kind() != ast.SelectKind || e.AsSelect().IsTestOnly() {
			return
		}
		operand := e.AsSelect().Operand()
		if t, ok := typeMap[operand.ID()]; ok && t.Kind() == types.DynKind {
			typeMap[operand.ID()] = cel.MapType(cel.StringType, cel.DynType)
		}
	}))
	sc := &staticCost{ast: checked}
	paths := &pathNode{}
	est := &staticEstimator{size: 1, record: paths}
	c, err := costEnv.EstimateCost(checked, est)
	if err != nil || c.Max > celUntrackedCostLimit {
		return nil
	}
	sc.paths = paths
	sc.bounds[0].Store(c.Max + 1)
	return sc
}

// bound returns the most an evaluation over an object whose sizes at the recorded paths are at
// most n can cost, and whether that is within celUntrackedCostLimit.
func (sc *staticCost) bound(n uint64) (uint64, bool) {
	b := 0
	if n > 1 {
		b = bits.Len64(n - 1)
	}
	if b > maxSizeBucket {
		return 0, false
	}
	v := sc.bounds[b].Load()
	if v == 0 {
		v = sc.estimate(uint64(1) << b)
		sc.bounds[b].Store(v)
	}
	if v == noBound {
		return 0, false
	}
	return v - 1, true
}

// estimate returns the stored form of the estimate with sizes up to size: its maximum plus one,
// or noBound. The paths the estimate asks for do not depend on the sizes it is given (the
// estimator's walk follows the AST), but should they differ, a path not measured would not be
// bounded by n, so the bucket is refused.
func (sc *staticCost) estimate(size uint64) uint64 {
	costEnv, err := celCostEnv()
	if err != nil {
		return noBound
	}
	est := &staticEstimator{size: size, known: sc.paths}
	c, err := costEnv.EstimateCost(sc.ast, est)
	if err != nil || est.unknownPath || c.Max > celUntrackedCostLimit {
		return noBound
	}
	return c.Max + 1
}

// staticEstimator is the checker.CostEstimator of static bounds: size for every value read from
// `object`, and compile-time prices for the calls costEstimator prices at run time.
type staticEstimator struct {
	size uint64
	// record, when set, collects the paths asked for.
	record *pathNode
	// known, when set, are the paths measured; unknownPath is set when another is asked for.
	known       *pathNode
	unknownPath bool
}

// EstimateSize returns {0, size} for a value at a path into `object`, and nil (cel-go's own size,
// or unbounded) for any other.
func (e *staticEstimator) EstimateSize(node checker.AstNode) *checker.SizeEstimate {
	path := node.Path()
	if len(path) == 0 || path[0] != CELObjectVariable {
		return nil
	}
	switch {
	case e.record != nil:
		e.record.add(path[1:])
	case e.known != nil && !e.known.has(path[1:]):
		e.unknownPath = true
	}
	return &checker.SizeEstimate{Min: 0, Max: e.size}
}

// EstimateCallCost prices the calls costEstimator.CallCost prices at run time:
//
//   - indexes(s) costs 1, plus one per ten bytes of s, plus one per index it returns, at most
//     maxIndexes (more is an error). A size is in code points and CallCost counts bytes, four
//     at most per code point.
//   - ext.Lists' functions are priced by cel-go's estimators in celCostEnv, ahead of this one.
//   - the Kubernetes libraries' functions by their own estimator, as the API server does.
//
// Any other call gets cel-go's default, which is what the tracker charges when CallCost returns
// nil.
func (e *staticEstimator) EstimateCallCost(function, overloadID string, target *checker.AstNode, args []checker.AstNode) *checker.CallEstimate {
	if overloadID == indexesOverload {
		size := checker.UnknownSizeEstimate()
		if len(args) == 1 {
			if s := args[0].ComputedSize(); s != nil {
				size = *s
			}
		}
		cost := size.MultiplyByCostFactor(0.4).Add(checker.FixedCostEstimate(1 + maxIndexes))
		result := checker.SizeEstimate{Min: 0, Max: maxIndexes}
		return &checker.CallEstimate{CostEstimate: cost, ResultSize: &result}
	}
	var k8s library.CostEstimator
	return k8s.EstimateCallCost(function, overloadID, target, args)
}

// pathNode is a set of paths into `object`, as a tree: the paths that end at a node are
// measured there, and its children continue them. The entries child stands for @items, @keys,
// @values and @indices alike: measure follows it into every element of a list and every key and
// value of a map, which covers what each of them names.
type pathNode struct {
	measured bool
	fields   []pathField
	entries  *pathNode
}

type pathField struct {
	name string
	node *pathNode
}

// add adds path, relative to this node.
func (t *pathNode) add(path []string) {
	for _, seg := range path {
		t = t.child(seg, true)
	}
	t.measured = true
}

// has reports whether path, relative to this node, is in the set.
func (t *pathNode) has(path []string) bool {
	for _, seg := range path {
		if t = t.child(seg, false); t == nil {
			return false
		}
	}
	return t.measured
}

func (t *pathNode) child(seg string, create bool) *pathNode {
	if isEntriesSegment(seg) {
		if t.entries == nil && create {
			t.entries = &pathNode{}
		}
		return t.entries
	}
	for _, f := range t.fields {
		if f.name == seg {
			return f.node
		}
	}
	if !create {
		return nil
	}
	n := &pathNode{}
	t.fields = append(t.fields, pathField{name: seg, node: n})
	return n
}

func isEntriesSegment(seg string) bool {
	return seg == "@items" || seg == "@keys" || seg == "@values" || seg == "@indices"
}

// measure returns the largest size of a value at the paths, starting at v, and false when it met
// a value whose size it cannot tell. A size is what cel-go's tracker would take: a list's or
// map's length, a string's bytes (at least its code points), and 1 for anything else. It reads
// only what the paths reach, which is what the expression reads.
func (t *pathNode) measure(v any) (uint64, bool) {
	// n is at least 1, the size of a scalar, whether or not this node is measured.
	n := uint64(1)
	switch x := v.(type) {
	case map[string]any:
		n = uint64(len(x))
	case []any:
		n = uint64(len(x))
	case string:
		n = uint64(len(x))
	case int64, float64, bool, nil:
	default:
		// Not a JSON value: the adapter may make it a list or map measure cannot follow.
		return 0, false
	}
	if !t.measured {
		n = 1
	}
	if len(t.fields) > 0 {
		if m, ok := v.(map[string]any); ok {
			for _, f := range t.fields {
				if child, found := m[f.name]; found {
					c, ok := f.node.measure(child)
					if !ok {
						return 0, false
					}
					n = max(n, c)
				}
			}
		}
	}
	if t.entries != nil {
		switch x := v.(type) {
		case []any:
			for _, e := range x {
				c, ok := t.entries.measure(e)
				if !ok {
					return 0, false
				}
				n = max(n, c)
			}
		case map[string]any:
			for k, e := range x {
				c, ok := t.entries.measure(e)
				if !ok {
					return 0, false
				}
				n = max(n, c, uint64(len(k)))
			}
		}
	}
	return n, true
}
