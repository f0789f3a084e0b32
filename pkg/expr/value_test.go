package expr_test

import (
	"encoding/json"
	"errors"
	"math"
	"testing"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/expr"
)

func TestValueString(t *testing.T) {
	tests := []struct {
		name  string
		value any
		want  string
	}{
		{"string", "text", "text"},
		{"empty string", "", ""},
		{"null", nil, ""},
		{"int64", int64(3), "3"},
		{"int", 3, "3"},
		{"int32", int32(-4), "-4"},
		{"uint64", uint64(math.MaxUint64), "18446744073709551615"},
		{"fraction", 2.5, "2.5"},
		{"whole float", 3.0, "3"},
		{"negative zero", math.Copysign(0, -1), "-0"},
		{"1e21", 1e21, "1000000000000000000000"},
		{"1e-7", 1e-7, "0.0000001"},
		{"float32", float32(0.5), "0.5"},
		{"json integer", json.Number("12"), "12"},
		{"json float", json.Number("1e-7"), "0.0000001"},
		{"true", true, "true"},
		{"false", false, "false"},
		{"empty map", map[string]any{}, "{}"},
		{"map, keys sorted", map[string]any{"b": int64(1), "a": "x"}, `{"a":"x","b":1}`},
		{"list", []any{"a", int64(1), nil, true}, `["a",1,null,true]`},
		{"numbers inside follow the rule", map[string]any{"big": 1e21, "tiny": []any{1e-7}}, `{"big":1000000000000000000000,"tiny":[0.0000001]}`},
		{"strings inside are JSON", []any{"say \"hi\"\n"}, `["say \"hi\"\n"]`},
		{"other types through JSON", struct{ A int }{A: 1}, `{"A":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := expr.ValueString(tt.value); got != tt.want {
				t.Errorf("ValueString(%#v) = %q, want %q", tt.value, got, tt.want)
			}
		})
	}
}

func TestMatchField(t *testing.T) {
	const (
		in           = v1alpha1.FieldSelectorOpIn
		notIn        = v1alpha1.FieldSelectorOpNotIn
		exists       = v1alpha1.FieldSelectorOpExists
		doesNotExist = v1alpha1.FieldSelectorOpDoesNotExist
	)
	tests := []struct {
		name      string
		op        v1alpha1.FieldSelectorOperator
		want      []string
		found     []any
		matched   bool
		shown     string
		wantError bool
	}{
		{"exists", exists, nil, []any{"x"}, true, "x", false},
		{"exists, nothing found", exists, nil, nil, false, "", false},
		{"exists, only null", exists, nil, []any{nil}, false, "", false},
		{"exists shows the first non-null", exists, nil, []any{nil, int64(2), "x"}, true, "2", false},
		{"does not exist", doesNotExist, nil, nil, true, "", false},
		{"does not exist, null", doesNotExist, nil, []any{nil}, true, "", false},
		{"does not exist, found", doesNotExist, nil, []any{false}, false, "", false},
		{"in, number", in, []string{"3"}, []any{int64(3)}, true, "3", false},
		{"in, whole float", in, []string{"3"}, []any{3.0}, true, "3", false},
		{"in, bool", in, []string{"true"}, []any{true}, true, "true", false},
		{"in, any value", in, []string{"green"}, []any{"blue", "green"}, true, "green", false},
		{"in, null never", in, []string{""}, []any{nil}, false, "", false},
		{"in, empty string", in, []string{""}, []any{""}, true, "", false},
		{"in, none listed", in, []string{"red"}, []any{"blue", "green"}, false, "", false},
		{"not in", notIn, []string{"red"}, []any{"blue", "green"}, true, "blue", false},
		{"not in, one listed", notIn, []string{"green"}, []any{"blue", "green"}, false, "", false},
		{"not in, nothing found", notIn, []string{"red"}, nil, false, "", false},
		{"unknown operator", "Equals", []string{"x"}, []any{"x"}, false, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			matched, shown, err := expr.MatchField(tt.op, tt.want, tt.found)
			if tt.wantError != errors.Is(err, expr.ErrUnknownOperator) {
				t.Fatalf("error %v, want an error: %v", err, tt.wantError)
			}
			if matched != tt.matched || shown != tt.shown {
				t.Errorf("MatchField = %v, %q; want %v, %q", matched, shown, tt.matched, tt.shown)
			}
		})
	}
}
