package stamp

import (
	"math"
)

// Contains reports whether live holds every field of stamped: maps by key (live may have more
// keys), lists element by element with equal lengths, and scalars equal, with numbers compared by
// value so that int64 3 and float64 3.0 are equal. A null in stamped is held by a missing or null
// field. The reconciler uses it to skip a write when the live object already says everything the
// stamp says (DESIGN §3.5).
func Contains(live, stamped map[string]any) bool {
	return holds(live, stamped)
}

func holds(live, stamped any) bool {
	switch s := stamped.(type) {
	case map[string]any:
		l, ok := live.(map[string]any)
		if !ok {
			return false
		}
		for k, sv := range s {
			lv, present := l[k]
			if !present {
				if sv == nil {
					continue
				}
				return false
			}
			if !holds(lv, sv) {
				return false
			}
		}
		return true
	case []any:
		l, ok := live.([]any)
		if !ok || len(l) != len(s) {
			return false
		}
		for i := range s {
			if !holds(l[i], s[i]) {
				return false
			}
		}
		return true
	case nil:
		return live == nil
	case string:
		l, ok := live.(string)
		return ok && l == s
	case bool:
		l, ok := live.(bool)
		return ok && l == s
	}
	sn, ok := number(stamped)
	if !ok {
		return false
	}
	ln, ok := number(live)
	return ok && sn.equal(ln)
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
