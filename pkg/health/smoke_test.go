package health_test

import (
	"testing"

	"github.com/surveyor-dev/surveyor/pkg/health"
)

func TestSmoke(t *testing.T) {
	p, err := health.CompileCEL(`object.status.conditions.exists(c, c.type == "Available" && c.status == "True")`, health.ResultBool)
	if err != nil {
		t.Fatal(err)
	}
	s := health.NewScope(deployment(t).Object)
	ok, err := p.EvalBool(s)
	t.Log(ok, err, s.Remaining())
	p2, err := health.CompileCEL(`indexes(object.status.completedIndexes)`, health.ResultAny)
	if err != nil {
		t.Fatal(err)
	}
	v, err := p2.Eval(health.NewScope(job(t).Object))
	t.Log(v, err)
	p3, err := health.CompileCEL(`object.status.nope`, health.ResultAny)
	_, err = p3.Eval(health.NewScope(job(t).Object))
	t.Log(err)
}
