package expr

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// ValueString is the one string form of a value that Surveyor compares and prints: In and NotIn
// compare it in health rules and selectors alike, a $(...)$ tag inside a longer string is replaced
// by it, and messages show it.
//
//   - A string is itself; null is the empty string; a bool is true or false.
//   - A number is written in plain decimal, never with an exponent: 3, -4, 2.5, 0.0000001,
//     1000000000000000000000. A float with no fraction is written as an integer (3.0 is 3), so a
//     number reads the same whether the object was decoded into int64 or float64. This is how a
//     Kubernetes user writes numbers in YAML, and what they write in values: ["3"].
//   - A map or a list is JSON, with map keys sorted and numbers written by the rule above.
func ValueString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return formatFloat(x)
	}
	var b strings.Builder
	writeValue(&b, v)
	return b.String()
}

// writeValue writes v as JSON, numbers in plain decimal.
func writeValue(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case string:
		raw, _ := json.Marshal(x) // a string always encodes
		b.Write(raw)
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case int:
		b.WriteString(strconv.Itoa(x))
	case int32:
		b.WriteString(strconv.FormatInt(int64(x), 10))
	case uint64:
		b.WriteString(strconv.FormatUint(x, 10))
	case float64:
		b.WriteString(formatFloat(x))
	case float32:
		b.WriteString(formatFloat(float64(x)))
	case json.Number:
		b.WriteString(formatNumber(x))
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeValue(b, k)
			b.WriteByte(':')
			writeValue(b, x[k])
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			writeValue(b, e)
		}
		b.WriteByte(']')
	default:
		raw, err := json.Marshal(v)
		if err != nil {
			fmt.Fprint(b, v)
			return
		}
		b.Write(raw)
	}
}

// formatFloat writes f in plain decimal with the fewest digits that read back as f.
func formatFloat(f float64) string {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// formatNumber writes a JSON number as written when it is an integer, else as a float.
func formatNumber(n json.Number) string {
	if _, err := n.Int64(); err == nil {
		return n.String()
	}
	if f, err := n.Float64(); err == nil {
		return formatFloat(f)
	}
	return n.String()
}

// ErrUnknownOperator is MatchField's error for an operator other than In, NotIn, Exists and
// DoesNotExist.
var ErrUnknownOperator = errors.New("unknown operator")

// MatchField applies a matchFields requirement to the values its key found (see Path.Find; pass
// nil when the key could not be read). It is the one rule behind the matchFields of health rules
// and of selectors:
//
//   - only non-null values count;
//   - Exists holds when there is a value, and shows the first;
//   - DoesNotExist holds when there is none, and shows "";
//   - In holds when any value's ValueString is in want, and shows that value;
//   - NotIn holds when there is a value and no value's ValueString is in want, and shows the
//     first.
//
// shown is the ValueString of the value that decided. An unknown operator is an error wrapping
// ErrUnknownOperator.
func MatchField(op v1alpha1.FieldSelectorOperator, want []string, found []any) (matched bool, shown string, err error) {
	first := slices.IndexFunc(found, func(v any) bool { return v != nil })
	switch op {
	case v1alpha1.FieldSelectorOpExists:
		if first < 0 {
			return false, "", nil
		}
		return true, ValueString(found[first]), nil
	case v1alpha1.FieldSelectorOpDoesNotExist:
		return first < 0, "", nil
	case v1alpha1.FieldSelectorOpIn:
		for _, v := range found {
			if s := ValueString(v); v != nil && slices.Contains(want, s) {
				return true, s, nil
			}
		}
		return false, "", nil
	case v1alpha1.FieldSelectorOpNotIn:
		if first < 0 {
			return false, "", nil
		}
		for _, v := range found {
			if v != nil && slices.Contains(want, ValueString(v)) {
				return false, "", nil
			}
		}
		return true, ValueString(found[first]), nil
	}
	return false, "", fmt.Errorf("%w %q", ErrUnknownOperator, op)
}
