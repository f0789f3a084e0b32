package expr_test

import (
	"fmt"

	"github.com/surveyor-dev/surveyor/pkg/expr"
)

// Health rules and condition rules share the CEL programs and the per-object budget.
func ExampleCompileCEL() {
	job := map[string]any{"status": map[string]any{"completedIndexes": "0-2,4", "succeeded": int64(4)}}
	scope := expr.NewScope(job) // one per object, shared by every expression about it

	complete, err := expr.CompileCEL(`size(indexes(object.status.completedIndexes)) == object.status.succeeded`, expr.ResultBool)
	if err != nil {
		fmt.Println(err)
		return
	}
	ok, err := complete.EvalBool(scope)
	fmt.Println(ok, err)

	verdict, _ := expr.CompileCEL(`{"reason": "Succeeded", "message": "indexes " + object.status.completedIndexes}`, expr.ResultAny)
	v, err := verdict.Eval(scope)
	fmt.Println(v, err)

	_, err = expr.CompileCEL(`object.status.succeeded + 1`, expr.ResultBool)
	fmt.Println(err)
	// Output:
	// true <nil>
	// map[message:indexes 0-2,4 reason:Succeeded] <nil>
	// expression "object.status.succeeded + 1": must evaluate to bool, but has type int
}
