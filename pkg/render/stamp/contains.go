package stamp

import (
	"math"
	"strconv"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Contains reports whether live holds every field of stamped: maps by key (live may have more
// keys), lists element by element with equal lengths, and scalars equal, with numbers compared by
// value so that int64 3 and float64 3.0 are equal. The reconciler uses it to skip a write when the
// live object already says everything the stamp says (DESIGN §3.5), so it compares with what the
// API server stores rather than with what the template wrote:
//
//   - A null in stamped is held by anything: server-side apply reads it as a field left unset.
//   - An empty map or an empty list in stamped is held by a missing or null field: the API server
//     drops them (labels: {}, env: []). So is a map holding only such values.
//   - A string or number in stamped is held by a string in live that is the same resource quantity:
//     the API server stores quantities in canonical form (1000m as "1", 0.5 as "500m", 1024Mi as
//     "1Gi"). Only values that both parse as quantities compare so; "abc" is never "abd".
//
// Treating equal quantities as equal cannot hide a template change: the reconciler consults
// Contains only when the stamp's digest is the one it applied last.
func Contains(live, stamped map[string]any) bool {
	return holds(live, stamped)
}

func holds(live, stamped any) bool {
	switch s := stamped.(type) {
	case map[string]any:
		// A missing or null map holds an empty one; l stays nil then, so that each stamped
		// key must itself be one the API server drops.
		l, ok := live.(map[string]any)
		if !ok && live != nil {
			return false
		}
		for k, sv := range s {
			if !holds(l[k], sv) { // a missing key reads as null
				return false
			}
		}
		return true
	case []any:
		l, ok := live.([]any)
		if !ok {
			return live == nil && len(s) == 0
		}
		if len(l) != len(s) {
			return false
		}
		for i := range s {
			if !holds(l[i], s[i]) {
				return false
			}
		}
		return true
	case nil:
		// Server-side apply reads a null as a field left unset: applying it again changes
		// nothing, whatever the live value (metadata.creationTimestamp: null, say).
		return true
	case string:
		l, ok := live.(string)
		if !ok {
			return false
		}
		return l == s || mayBeQuantity(s) && sameQuantity(l, s)
	case bool:
		l, ok := live.(bool)
		return ok && l == s
	}
	sn, ok := number(stamped)
	if !ok {
		return false
	}
	if l, ok := live.(string); ok {
		return sn.isQuantity(l)
	}
	ln, ok := number(live)
	return ok && sn.equal(ln)
}

// mayBeQuantity tells cheaply whether s could parse as a resource quantity, which starts with a
// sign, a digit or a decimal point, so that most strings that differ skip parsing.
func mayBeQuantity(s string) bool {
	if s == "" {
		return false
	}
	switch c := s[0]; {
	case c >= '0' && c <= '9', c == '+', c == '-', c == '.':
		return true
	}
	return false
}

// sameQuantity tells whether live and stamped both parse as the same resource quantity.
func sameQuantity(live, stamped string) bool {
	sq, err := resource.ParseQuantity(stamped)
	if err != nil {
		return false
	}
	lq, err := resource.ParseQuantity(live)
	return err == nil && lq.Cmp(sq) == 0
}

// isQuantity tells whether live parses as the quantity the API server reads the stamped number
// as: the JSON number itself, which for a float is its shortest decimal form.
func (a num) isQuantity(live string) bool {
	lq, err := resource.ParseQuantity(live)
	if err != nil {
		return false
	}
	if a.isInt {
		return lq.Cmp(*resource.NewQuantity(a.i, resource.DecimalSI)) == 0
	}
	sq, err := resource.ParseQuantity(strconv.FormatFloat(a.f, 'f', -1, 64))
	return err == nil && lq.Cmp(sq) == 0
}

// num is a JSON number, kept as an integer when it is one so that large int64s compare exactly.
type num struct {
	i     int64
	f     float64
	isInt bool
}

func number(v any) (num, bool) {
	switch v := v.(type) {
	case int64:
		return num{i: v, isInt: true}, true
	case int:
		return num{i: int64(v), isInt: true}, true
	case int32:
		return num{i: int64(v), isInt: true}, true
	case float64:
		return num{f: v}, true
	case float32:
		return num{f: float64(v)}, true
	}
	return num{}, false
}

func (a num) equal(b num) bool {
	switch {
	case a.isInt && b.isInt:
		return a.i == b.i
	case a.isInt:
		return intEqualsFloat(a.i, b.f)
	case b.isInt:
		return intEqualsFloat(b.i, a.f)
	default:
		return a.f == b.f
	}
}

func intEqualsFloat(i int64, f float64) bool {
	if f != math.Trunc(f) || f < math.MinInt64 || f >= math.MaxInt64 {
		return false
	}
	return int64(f) == i
}
