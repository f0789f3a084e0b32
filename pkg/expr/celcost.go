package expr

import (
	"maps"
	"math"
	"math/bits"
	"slices"
	"strings"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/common"
	"github.com/google/cel-go/common/overloads"
	"github.com/google/cel-go/common/stdlib"
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
// object.status.conditions and object.status.conditions.@keys.type, the type of each condition).
// To evaluate, the Program
// measures the largest value at each path in this object, rounds each size up to a power of two,
// and looks up, or computes once, the worst-case cost for those sizes. When that bound is within
// the per-call limit and the scope's remaining budget, the expression runs without tracking and the
// bound is charged to the budget. Otherwise it runs with cel.CostLimit and its actual cost is
// charged. Sizes the estimator cannot tie to a path of the object (function results, optionals,
// lists built by the expression) stay unknown, which makes the bound unknown and sends the
// expression to the tracked path, so the shortcut never trusts a size it did not measure.
//
// The static estimate and the runtime tracker are two separate cost models, and they disagree for
// some functions: the Kubernetes and extension libraries charge their functions at run time by
// other formulas than their estimates, and cel-go estimates startsWith and endsWith from the prefix
// while its tracker charges the whole string. So only expressions that call nothing but cel-go's
// standard functions (and indexes) get a bound, with startsWith and endsWith estimated as the
// tracker charges them; any other function sends the expression to the tracked path.
// TestBoundCoversActualCost checks the bound against the tracker.

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
		r.paths = append(r.paths, slices.Clone(p[1:])) // cel-go may reuse the slice
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
	switch overloadID {
	case overloads.StartsWithString, overloads.EndsWithString:
		// The tracker charges the size of the string searched, not of the prefix.
		if target != nil {
			size := s.EstimateSize(*target)
			if size == nil {
				size = &checker.SizeEstimate{Min: 0, Max: math.MaxUint64}
			}
			return &checker.CallEstimate{CostEstimate: size.MultiplyByCostFactor(common.StringTraversalCostFactor)}
		}
	}
	return estimateCallCost(s, function, overloadID, target, args)
}

// trustedOverloads are the overloads whose estimate covers what the runtime tracker charges: cel-go's
// standard library, its optional types (constant-cost functions), and indexes().
var trustedOverloads = sync.OnceValue(func() map[string]bool {
	trusted := map[string]bool{indexesOverload: true}
	for _, fn := range stdlib.Functions() {
		for _, o := range fn.OverloadDecls() {
			trusted[o.ID()] = true
		}
	}
	if env, err := cel.NewEnv(cel.OptionalTypes()); err == nil {
		for _, fn := range env.Functions() {
			for _, o := range fn.OverloadDecls() {
				trusted[o.ID()] = true
			}
		}
	}
	return trusted
})

// callsOnlyTrusted reports whether every call of the checked expression can only run a trusted
// overload at run time. A call on dyn arguments lists every overload its argument types might
// select, e.g. string(x) lists int64_to_string next to the Kubernetes library's ip_to_string. Those
// library overloads take the library's own types (IP, CIDR, quantity, URL, semver), which no JSON
// value has and only a library function creates; and a call whose candidates are all untrusted,
// such as ip(s), already sends the expression to the tracked path. So a call qualifies when at
// least one of its candidates is trusted.
func callsOnlyTrusted(a *cel.Ast) bool {
	trusted := trustedOverloads()
	for _, ref := range a.NativeRep().ReferenceMap() {
		if len(ref.OverloadIDs) > 0 && !slices.ContainsFunc(ref.OverloadIDs, func(id string) bool { return trusted[id] }) {
			return false
		}
	}
	return true
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

// recordCostPaths finds the object paths the Program's bound depends on and arranges them in a
// trie, so that measuring walks each part of the object once. With more than maxBoundPaths paths,
// or when estimation fails, the Program always runs tracked.
func (p *Program) recordCostPaths() {
	if !callsOnlyTrusted(p.ast) {
		return
	}
	rec := &costPaths{seen: map[string]bool{}}
	env, err := celEnv()
	if err != nil {
		return
	}
	if _, err := env.EstimateCost(p.ast, rec); err != nil || len(rec.paths) > maxBoundPaths {
		return
	}
	p.costPaths = rec.paths
	keys := make([]string, len(rec.paths))
	for i, path := range rec.paths {
		keys[i] = strings.Join(path, ".")
	}
	p.sizeSignature = strings.Join(keys, "\x00")
	p.sizeTrie = &sizeNode{}
	for i, path := range rec.paths {
		p.sizeTrie.insert(path, i)
	}
	p.bounded = true
}

// sizeNode is a trie node of cost paths: the paths ending here, and the segments going on.
type sizeNode struct {
	ends     []int // indexes of the paths whose size is the size of the value here
	children []sizeEdge
}

type sizeEdge struct {
	seg   string
	entry bool // @items, @keys, @values or @indices: every entry of a list or map
	keys  bool // @keys: on a map, the keys rather than the values
	index bool // @indices: on a list, the (integer) indexes
	node  *sizeNode
}

func (n *sizeNode) insert(path []string, i int) {
	if len(path) == 0 {
		n.ends = append(n.ends, i)
		return
	}
	seg := path[0]
	for _, e := range n.children {
		if e.seg == seg {
			e.node.insert(path[1:], i)
			return
		}
	}
	e := sizeEdge{seg: seg, node: &sizeNode{}}
	switch seg {
	case "@items", "@values":
		e.entry = true
	case "@keys":
		e.entry, e.keys = true, true
	case "@indices":
		e.entry, e.index = true, true
	}
	n.children = append(n.children, e)
	e.node.insert(path[1:], i)
}

// measure records in sizes the largest size, in CEL's sense (bytes of a string, at least its length
// in code points; entries of a list or map), of the values each path reaches in v. A comprehension
// over a dyn value is recorded as @keys even when the value turns out to be a list, so @keys on a
// list means its items.
func (n *sizeNode) measure(v any, sizes *[maxBoundPaths]uint64) {
	if len(n.ends) > 0 {
		size := sizeOf(v)
		for _, i := range n.ends {
			sizes[i] = max(sizes[i], size)
		}
	}
	for _, e := range n.children {
		switch x := v.(type) {
		case map[string]any:
			switch {
			case !e.entry:
				if child, ok := x[e.seg]; ok {
					e.node.measure(child, sizes)
				}
			case e.keys:
				for k := range x {
					e.node.measure(k, sizes)
				}
			default:
				for _, child := range x {
					e.node.measure(child, sizes)
				}
			}
		case []any:
			if e.entry && !e.index {
				for _, child := range x {
					e.node.measure(child, sizes)
				}
			}
		}
	}
}

// bound returns the worst-case cost of the Program on the scope's object, or unbounded.
func (p *Program) bound(s *Scope) uint64 {
	if !p.bounded {
		return unbounded
	}
	key, ok := s.sizeClass(p.sizeSignature)
	if !ok {
		var sizes [maxBoundPaths]uint64
		p.sizeTrie.measure(s.object, &sizes)
		for i := range p.costPaths {
			key |= uint64(bits.Len64(sizes[i])) << (6 * i)
		}
		s.rememberSizeClass(p.sizeSignature, key)
	}
	if bounds := p.bounds.Load(); bounds != nil {
		if b, ok := (*bounds)[key]; ok {
			return b
		}
	}
	b := p.estimate(key)
	p.boundsMu.Lock()
	defer p.boundsMu.Unlock()
	next := map[uint64]uint64{key: b}
	if old := p.bounds.Load(); old != nil {
		maps.Copy(next, *old)
	}
	p.bounds.Store(&next)
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
	// The two models also differ by a unit here and there in what they charge around the
	// expression (an iteration's bookkeeping, an error's path); a margin absorbs that.
	bound := est.Max + est.Max/2 + 8
	if bound > CELCallCostLimit {
		return unbounded
	}
	return bound
}

// sizeClass returns the size class the scope's object had for a signature (the list of cost
// paths), measured by an earlier Program with the same paths: expressions about one object often
// read the same values, e.g. status.conditions and each condition's type and status.
func (s *Scope) sizeClass(signature string) (uint64, bool) {
	for i := range s.classes {
		if c := &s.classes[i]; c.known && c.signature == signature {
			return c.key, true
		}
	}
	return 0, false
}

func (s *Scope) rememberSizeClass(signature string, key uint64) {
	s.classes[s.nextClass] = sizeClassEntry{signature: signature, key: key, known: true}
	s.nextClass = (s.nextClass + 1) % len(s.classes)
}

// sizeClassEntry is a measured size class, remembered by a Scope.
type sizeClassEntry struct {
	signature string
	key       uint64
	known     bool
}

// sizeOf is the size the runtime tracker gives a value: bytes of a string (at least its length in
// code points), entries of a list or map, and 1 for anything else.
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
	return 1
}
