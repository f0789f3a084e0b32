package health_test

import (
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/ext"
)

func BenchmarkScratch(b *testing.B) {
	obj := deployment(b).Object
	expr := `object.status.conditions.exists(c, c.type == "Available" && c.status == "True")`
	for _, tc := range []struct {
		name string
		env  []cel.EnvOption
		prg  []cel.ProgramOption
	}{
		{"plain", nil, nil},
		{"cost", nil, []cel.ProgramOption{cel.CostLimit(1000000)}},
		{"lists+cost", []cel.EnvOption{ext.Lists(), ext.Sets()}, []cel.ProgramOption{cel.CostLimit(1000000)}},
		{"lists", []cel.EnvOption{ext.Lists(), ext.Sets()}, nil},
		{"opt", nil, []cel.ProgramOption{cel.EvalOptions(cel.OptOptimize)}},
	} {
		env, err := cel.NewEnv(append(tc.env, cel.Variable("object", cel.MapType(cel.StringType, cel.DynType)))...)
		if err != nil {
			b.Fatal(err)
		}
		ast, iss := env.Compile(expr)
		if iss.Err() != nil {
			b.Fatal(iss.Err())
		}
		prg, err := env.Program(ast, tc.prg...)
		if err != nil {
			b.Fatal(err)
		}
		act, _ := cel.NewActivation(map[string]any{"object": types.DefaultTypeAdapter.NativeToValue(obj)})
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				prg.Eval(act)
			}
		})
	}
}
