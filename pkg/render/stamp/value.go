package stamp

import (
	"encoding/json"
	"fmt"
	"math"

	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// jsonValue returns a deep copy of v made only of the types an unstructured object may hold (int64,
// float64, string, bool, nil, map[string]any, []any), so that unstructured.DeepCopy accepts it and
// nothing in it aliases the context. Other numeric types are converted; anything else goes through
// a JSON round trip.
func jsonValue(v any) (any, error) {
	switch v := v.(type) {
	case nil, string, bool, int64, float64:
		return v, nil
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, child := range v {
			c, err := jsonValue(child)
			if err != nil {
				return nil, err
			}
			out[k] = c
		}
		return out, nil
	case []any:
		out := make([]any, len(v))
		for i, child := range v {
			c, err := jsonValue(child)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	case int:
		return int64(v), nil
	case int32:
		return int64(v), nil
	case int16:
		return int64(v), nil
	case int8:
		return int64(v), nil
	case uint8:
		return int64(v), nil
	case uint16:
		return int64(v), nil
	case uint32:
		return int64(v), nil
	case uint:
		return uintValue(uint64(v)), nil
	case uint64:
		return uintValue(v), nil
	case float32:
		return float64(v), nil
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return i, nil
		}
		f, err := v.Float64()
		if err != nil {
			return nil, fmt.Errorf("number %s: %w", v, err)
		}
		return f, nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("value of type %T is not JSON: %w", v, err)
	}
	var out any
	if err := utiljson.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("value of type %T is not JSON: %w", v, err)
	}
	return out, nil
}

func uintValue(u uint64) any {
	if u > math.MaxInt64 {
		return float64(u)
	}
	return int64(u)
}
