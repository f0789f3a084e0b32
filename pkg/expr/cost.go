package expr

import (
	"strings"

	"github.com/google/cel-go/common"
	"github.com/google/cel-go/common/operators"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"k8s.io/apiserver/pkg/cel/library"
)

// costEstimator is the runtime cost of the calls cel-go's own tracker does not price. cel-go
// charges its standard functions itself and asks this estimator about every other call:
//
//   - indexes() costs one unit per index it returns plus one per ten bytes it parses, so that a
//     large index set counts against the limits like the list it is;
//   - the functions of ext.Lists cost what cel-go's version 3 of the library charges (see
//     listCallCost);
//   - the Kubernetes libraries cost what the Kubernetes API server charges.
type costEstimator struct {
	k8s library.CostEstimator
}

// CallCost returns the cost of one call, or nil for cel-go's default. It runs for every call an
// expression makes, so it allocates only when it returns a cost of its own.
func (c costEstimator) CallCost(function, overloadID string, args []ref.Val, result ref.Val) *uint64 {
	switch {
	case overloadID == indexesOverload:
		cost := uint64(1)
		if len(args) == 1 {
			if s, ok := args[0].(types.String); ok {
				cost += uint64(len(s)) / 10
			}
		}
		if _, ok := result.(traits.Sizer); ok {
			cost += sizeOf(result)
		}
		return &cost
	case function == operators.Equals && len(args) == 2 && isCELValue(args[0]):
		// The Kubernetes estimator prices equality of its own types only, and allocates to say
		// so; cel-go prices the rest.
		return nil
	}
	if cost, ok := listCallCost(overloadID, args, result); ok {
		return costOf(cost)
	}
	return c.k8s.CallCost(function, overloadID, args, result)
}

// costOf returns a pointer to cost, allocated only where it is called.
func costOf(cost uint64) *uint64 { return &cost }

// isCELValue reports whether v has one of CEL's own types, not one of the Kubernetes libraries'.
func isCELValue(v ref.Val) bool {
	switch v.Type() {
	case types.StringType, types.IntType, types.DoubleType, types.BoolType, types.NullType, types.UintType,
		types.BytesType, types.ListType, types.MapType, types.TimestampType, types.DurationType:
		return true
	}
	return false
}

// listCallCost prices the functions of ext.Lists. The environment loads version 2 of the library,
// which has every function of version 3 but not its cost trackers: cel-go installs those as a map
// it builds anew for every evaluation, 21 entries, which doubled the time of a typical evaluation.
// The costs here are version 3's, so expressions cost what cel-go says they cost, and
// TestListCostsMatchCELGo holds the two to each other:
//
//   - slice, lists.range and reverse: the size of the list they make;
//   - flatten(depth): depth times the size of the list flattened;
//   - distinct, sort and sortBy: a comparison of every pair, twice (plus a tenth for strings and
//     bytes, which compare by traversal);
//
// each plus one for the call and the cost of creating a list.
func listCallCost(overloadID string, args []ref.Val, result ref.Val) (uint64, bool) {
	switch {
	case overloadID == "list_slice", overloadID == "lists_range", overloadID == "list_reverse":
		return allocatingCall(1, sizeOf(result)), true
	case overloadID == "list_flatten", overloadID == "list_flatten_int":
		depth := 1.0
		if len(args) == 2 {
			if d, ok := args[1].(types.Int); ok {
				depth = float64(max(d, 0))
			}
		}
		return allocatingCall(depth, sizeOf(args[0])), true
	case overloadID == "list_distinct", isListOverload(overloadID, "_sort"):
		return selfCompareCost(args, 0), true
	case isListOverload(overloadID, "_sortByAssociatedKeys"):
		return selfCompareCost(args, 1), true
	}
	return 0, false
}

// isListOverload reports whether id is list_<type><suffix>, e.g. list_string_sort.
func isListOverload(id, suffix string) bool {
	return strings.HasPrefix(id, "list_") && strings.HasSuffix(id, suffix)
}

// selfCompareCost is the cost of comparing every pair of entries of the list args[i].
func selfCompareCost(args []ref.Val, i int) uint64 {
	if len(args) <= i {
		return allocatingCall(0, 0)
	}
	l, ok := args[i].(traits.Lister)
	if !ok {
		return allocatingCall(0, 0)
	}
	n := sizeOf(l)
	factor := 2.0
	if n > 0 {
		if t := l.Get(types.IntZero).Type(); t == types.StringType || t == types.BytesType {
			factor += common.StringTraversalCostFactor
		}
	}
	return allocatingCall(factor, n*n)
}

// allocatingCall is the cost of a call that creates a list: factor per unit of size, one for the
// call and the base cost of a list.
func allocatingCall(factor float64, size uint64) uint64 {
	return uint64(float64(size)*factor) + 1 + common.ListCreateBaseCost
}

// sizeOf is the size cel-go's tracker gives a value: its size when it has one, 1 otherwise.
func sizeOf(v ref.Val) uint64 {
	if s, ok := v.(traits.Sizer); ok {
		if n, ok := s.Size().(types.Int); ok && n > 0 {
			return uint64(n)
		}
		return 0
	}
	return 1
}
