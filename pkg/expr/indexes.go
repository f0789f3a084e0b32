package expr

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
)

const (
	indexesFunction = "indexes"
	indexesOverload = "indexes_string"
	// maxIndexes bounds the list indexes() builds. It is the Job API's limit on completions of an
	// Indexed Job, so every real index set fits, and a hostile "0-999999999" fails instead of
	// allocating gigabytes before the cost tracker sees it.
	maxIndexes = 100_000
)

// ParseIndexes parses a Job index set such as "1,3-5,7", the format of a Job's
// status.completedIndexes and status.failedIndexes, into its indexes in the order written:
// [1 3 4 5 7]. The empty string is the empty set. Spaces around items are ignored. A malformed item,
// a negative index, a range whose end is below its start, or more than 100000 indexes is an error.
// CEL expressions call it as indexes(string) -> list(int).
func ParseIndexes(set string) ([]int64, error) {
	if strings.TrimSpace(set) == "" {
		return []int64{}, nil
	}
	var out []int64
	for item := range strings.SplitSeq(set, ",") {
		item = strings.TrimSpace(item)
		lo, hi, isRange := strings.Cut(item, "-")
		first, err := parseIndex(lo, item)
		if err != nil {
			return nil, err
		}
		last := first
		if isRange {
			if last, err = parseIndex(hi, item); err != nil {
				return nil, err
			}
			if last < first {
				return nil, fmt.Errorf("invalid index range %q: end is below start", item)
			}
		}
		if int64(len(out))+last-first+1 > maxIndexes {
			return nil, fmt.Errorf("index set has more than %d indexes", maxIndexes)
		}
		for i := first; i <= last; i++ {
			out = append(out, i)
		}
	}
	return out, nil
}

func parseIndex(s, item string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" || s[0] == '+' || s[0] == '-' {
		return 0, fmt.Errorf("invalid index set item %q", item)
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		var numErr *strconv.NumError
		if errors.As(err, &numErr) {
			err = numErr.Err
		}
		return 0, fmt.Errorf("invalid index set item %q: %w", item, err)
	}
	return n, nil
}

func indexesLibrary() cel.EnvOption {
	return cel.Function(indexesFunction,
		cel.Overload(indexesOverload, []*cel.Type{cel.StringType}, cel.ListType(cel.IntType),
			cel.UnaryBinding(func(arg ref.Val) ref.Val {
				s, ok := arg.(types.String)
				if !ok {
					return types.MaybeNoSuchOverloadErr(arg)
				}
				idx, err := ParseIndexes(string(s))
				if err != nil {
					return types.NewErr("indexes: %v", err)
				}
				vals := make([]ref.Val, len(idx))
				for i, n := range idx {
					vals[i] = types.Int(n)
				}
				return types.NewRefValList(types.DefaultTypeAdapter, vals)
			})))
}
