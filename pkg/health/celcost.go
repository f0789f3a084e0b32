package health

import (
	"math"
	"math/bits"
	"strings"

	"github.com/google/cel-go/checker"
	"k8s.io/apiserver/pkg/cel/library"
)

// Cost bounds: why most evaluations skip cel-go's runtime cost tracker.
//
// cel-go enforces cel.CostLimit by observing every step of the evaluation, which makes an
// evaluation five to seven times slower and allocates on every function call. Yet for most health
// expressions the cost can be bounded before running them: cel-go's static estimator, the same one
// the Kubernetes API server uses to admit CRD validation rules, gives the worst-case cost of an
// expression from the sizes of the values it reads. Those values all come from `object`, and their
// sizes can be read from the object itself.
//
// So each Program remembers the object paths the estimator asks about (for example
// object.status.conditions and object.status.conditions.@items.type). To evaluate, the Program
// measures the largest value at each path in this object, rounds each size up to a power of two,
// and looks up, or computes once, the worst-case cost for those sizes. When that bound is within
// the per-call limit and the scope's remaining budget, the expression runs without tracking and the
// bound is charged to the budget. Otherwise it runs with cel.CostLimit and its actual cost is
// charged. Sizes the estimator cannot tie to the object (computed lists, index results, optionals)
// are unknown, which makes the bound unknown and sends the expression to the tracked path, so the
// shortcut never trusts a size it did not measure.

// maxBoundPaths is the most object paths a Program measures; an expression that reads more always
// runs tracked. Six bits per path fit ten paths in the uint64 key of the bound cache.
const maxBoundPaths = 10

// unbounded marks a size class whose worst case exceeds the per-call limit.
const unbounded = math.MaxUint64

// costPaths records the object paths that the static estimator asks the size of.
type costPaths struct {
	paths [][]string
	seen  map[string]bool
}

func (r *costPaths) EstimateSize(n checker.AstNode) *checker.SizeEstimate {
	p := n.Path()
	if len(p) == 0 || p[0] != CELObjectVariable {
		return nil
	}
	key := strings.Join(p, "\x00")
	if !r.seen[key] {
		r.seen[key] = true
		r.paths = append(r.paths, p[1:])
	}
	return &checker.SizeEstimate{Min: 0, Max: 1}
}

func (r *costPaths) EstimateCallCost(function, overloadID string, target *checker.AstNode, args []checker.AstNode) *checker.CallEstimate {
	return estimateCallCost(r, function, overloadID, target, args)
}

// sizedObject answers the estimator with measured sizes, and with nothing for any other node.
type sizedObject struct {
	sizes map[string]uint64
}

func (s *sizedObject) EstimateSize(n checker.AstNode) *checker.SizeEstimate {
	p := n.Path()
	if len(p) == 0 || p[0] != CELObjectVariable {
		return nil
	}
	size, ok := s.sizes[strings.Join(p[1:], "\x00")]
	if !ok {
		return nil
	}
	return &checker.SizeEstimate{Min: 0, Max: size}
}

func (s *sizedObject) EstimateCallCost(function, overloadID string, target *checker.AstNode, args []checker.AstNode) *checker.CallEstimate {
	return estimateCallCost(s, function, overloadID, target, args)
}

// estimateCallCost is the static twin of costEstimator.CallCost: the Kubernetes libraries' own
// estimates, and for indexes() the bound its list size limit gives.
func estimateCallCost(sizes checker.CostEstimator, function, overloadID string, target *checker.AstNode, args []checker.AstNode) *checker.CallEstimate {
	if overloadID == indexesOverload {
		return &checker.CallEstimate{
			CostEstimate: checker.CostEstimate{Min: 1, Max: 1 + 2*maxIndexes},
			ResultSize:   &checker.SizeEstimate{Min: 0, Max: maxIndexes},
		}
	}
	k8s := library.CostEstimator{SizeEstimator: sizes}
	return k8s.EstimateCallCost(function, overloadID, target, args)
}

// recordCostPaths returns the object paths the Program's bound depends on, or nil when there are
// too many to measure; the Program then always runs tracked.
func (p *Program) recordCostPaths() {
	rec := &costPaths{seen: map[string]bool{}}
	env, err := celEnv()
	if err != nil {
		return
	}
	if _, err := env.EstimateCost(p.ast, rec); err != nil || len(rec.paths) > maxBoundPaths {
		return
	}
	p.costPaths = rec.paths
	p.bounded = true
}

// bound returns the worst-case cost of the Program on object, or unbounded.
func (p *Program) bound(object map[string]any) uint64 {
	if !p.bounded {
		return unbounded
	}
	var key uint64
	for i, path := range p.costPaths {
		key |= uint64(bits.Len64(sizeAt(object, path))) << (6 * i)
	}
	if b, ok := p.bounds.Load(key); ok {
		return b.(uint64)
	}
	b := p.estimate(key)
	p.bounds.Store(key, b)
	return b
}

// estimate computes the worst case for the size class key: every path at its class's largest size.
func (p *Program) estimate(key uint64) uint64 {
	env, err := celEnv()
	if err != nil {
		return unbounded
	}
	sizes := &sizedObject{sizes: make(map[string]uint64, len(p.costPaths))}
	for i, path := range p.costPaths {
		class := (key >> (6 * i)) & 63
		sizes.sizes[strings.Join(path, "\x00")] = uint64(1)<<class - 1
	}
	est, err := env.EstimateCost(p.ast, sizes)
	if err != nil || est.Max > CELCallCostLimit {
		return unbounded
	}
	return est.Max
}

// sizeAt returns the largest size, in CEL's sense (bytes of a string, at least its length in code
// points; entries of a list or map), of the values at path in v. The estimator's path segments
// @items, @keys, @values and @indices stand for the entries of a list or map: a comprehension over
// a dyn value is recorded as @keys even when it turns out to be a list.
func sizeAt(v any, path []string) uint64 {
	if len(path) == 0 {
		return sizeOf(v)
	}
	seg, rest := path[0], path[1:]
	var max uint64
	switch seg {
	case "@items", "@keys", "@values", "@indices":
		switch x := v.(type) {
		case []any:
			if seg == "@indices" {
				return 0
			}
			for _, e := range x {
				max = maxOf(max, sizeAt(e, rest))
			}
		case map[string]any:
			for k, e := range x {
				if seg == "@keys" {
					if len(rest) == 0 {
						max = maxOf(max, uint64(len(k)))
					}
					continue
				}
				max = maxOf(max, sizeAt(e, rest))
			}
		}
		return max
	}
	if m, ok := v.(map[string]any); ok {
		return sizeAt(m[seg], rest)
	}
	return 0
}

func sizeOf(v any) uint64 {
	switch x := v.(type) {
	case string:
		return uint64(len(x))
	case []any:
		return uint64(len(x))
	case map[string]any:
		return uint64(len(x))
	case []byte:
		return uint64(len(x))
	}
	return 0
}

func maxOf(a, b uint64) uint64 {
	if a > b {
		return a
	}
	return b
}
