package expr_test

import (
	"testing"

	"github.com/surveyor-dev/surveyor/pkg/expr"
)

func BenchmarkCELProgram(b *testing.B) {
	dep := deployment(b)
	p, err := expr.CompileCEL(`object.status.conditions.exists(c, c.type == "Available" && c.status == "True")`, expr.ResultBool)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("EvalBoolSharedScope", func(b *testing.B) {
		s := expr.NewScopeWithBudget(dep.Object, ^uint64(0))
		b.ReportAllocs()
		for b.Loop() {
			if ok, err := p.EvalBool(s); !ok || err != nil {
				b.Fatal(ok, err)
			}
		}
	})
	b.Run("CompileCached", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := expr.CompileCEL(p.String(), expr.ResultBool); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkPathFind(b *testing.B) {
	dep := deployment(b)
	for _, text := range []string{"status.readyReplicas", `status.conditions[?(@.type=="Available")].status`} {
		p, err := expr.ParsePath(text)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(text, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if v, err := p.Find(dep.Object); err != nil || len(v) != 1 {
					b.Fatal(v, err)
				}
			}
		})
	}
}
