package yttworker_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/surveyor-dev/surveyor/internal/yttworker"
	"github.com/surveyor-dev/surveyor/pkg/render/ytt"
)

// TestMain is the hook: the Pool runs this test binary as its workers.
func TestMain(m *testing.M) {
	yttworker.RunIfWorker()
	os.Exit(m.Run())
}

const configMap = "#@ load(\"@ytt:data\", \"data\")\nkind: ConfigMap\ndata:\n  n: #@ data.values.params.n\n"

// limit is the test pools' time limit. Their clock is a fake one: an evaluation runs out of
// time only when a test steps the clock past it, so no test depends on how fast the
// machine evaluates, and a memory limit cannot lose a race with the time limit.
const limit = 2 * time.Second

// runaways are templates no worker survives, with the limit each exceeds: the loop runs for
// minutes and allocates nothing it keeps (the test steps the clock past the limit while it
// runs); the lists reach the memory limit with the clock standing still.
var runaways = []struct {
	name, source, want string
	// outOfTime says the test steps the clock past the time limit once the evaluation runs.
	outOfTime bool
}{
	{"a loop of 10^9", "#@ for i in range(1000000000):\n#@ end\nkind: ConfigMap\n", "ytt: evaluation exceeded the time limit of 2s", true},
	{"a 4 GiB list", "#@ l = [0] * (1 << 28)\nkind: ConfigMap\n", "ytt: evaluation exceeded the memory limit of 256 MiB", false},
	{"a list grown to 4 GiB", "#@ l = []\n#@ for i in range(1 << 28):\n#@   l.append(i)\n#@ end\nkind: ConfigMap\n", "ytt: evaluation exceeded the memory limit of 256 MiB", false},
}

// newPool is a Pool of the default size and memory limit, with a time limit of limit on
// the fake clock it returns.
func newPool(t *testing.T) (*yttworker.Pool, *clocktesting.FakeClock) {
	t.Helper()
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
	p, err := yttworker.New(yttworker.Options{Timeout: limit, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p, clk
}

// waitForEvaluations waits until n evaluations are timed on clk: they hold a worker each.
func waitForEvaluations(t *testing.T, clk *clocktesting.FakeClock, n int) {
	t.Helper()
	// A bound only against a hang: a worker starts in milliseconds.
	deadline := time.Now().Add(time.Minute)
	for clk.Waiters() != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d evaluations running after a minute, want %d", clk.Waiters(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// evalAsync evaluates source in p in a goroutine; the channel gets its error.
func evalAsync(p *yttworker.Pool, source string) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := p.Eval(source, nil)
		done <- err
	}()
	return done
}

func TestPoolEvaluates(t *testing.T) {
	p, _ := newPool(t)
	values := map[string]any{"params": map[string]any{"n": "5"}}
	out, err := p.Eval(configMap, values)
	want, _ := ytt.Eval(configMap, values)
	if err != nil || string(out) != string(want) {
		t.Fatalf("Eval = %q, %v; want %q", out, err, want)
	}
	_, err = p.Eval(configMap, map[string]any{"params": map[string]any{}})
	if err == nil || !strings.HasPrefix(err.Error(), "ytt: Error: \n- struct has no .n field or method") {
		t.Fatalf("error = %v, want ytt's", err)
	}
	// 64 MiB of list fits the budget.
	if _, err := p.Eval("#@ l = [0] * (1 << 22)\nkind: ConfigMap\n", nil); err != nil {
		t.Fatalf("a template within the memory budget: %v", err)
	}
}

// Each runaway fails with its limit, and the worker it killed is replaced.
func TestPoolBoundsRunaways(t *testing.T) {
	p, clk := newPool(t)
	for _, tt := range runaways {
		t.Run(tt.name, func(t *testing.T) {
			done := evalAsync(p, tt.source)
			if tt.outOfTime {
				waitForEvaluations(t, clk, 1)
				clk.Step(limit)
			}
			if err := <-done; err == nil || err.Error() != tt.want {
				t.Fatalf("error = %v, want %q", err, tt.want)
			}
			for i := range 3 { // more than the pool's size: every slot works again
				values := map[string]any{"params": map[string]any{"n": fmt.Sprint(i)}}
				if _, err := p.Eval(configMap, values); err != nil {
					t.Fatalf("after the runaway: %v", err)
				}
			}
		})
	}
}

// A runaway holds one worker; the other keeps evaluating, while the runaway still runs.
func TestPoolServesOthersDuringARunaway(t *testing.T) {
	p, clk := newPool(t)
	runaway := evalAsync(p, runaways[0].source)
	waitForEvaluations(t, clk, 1)
	served := make(chan error, 1)
	go func() {
		for i := range 20 {
			if _, err := p.Eval(configMap, map[string]any{"params": map[string]any{"n": fmt.Sprint(i)}}); err != nil {
				served <- err
				return
			}
		}
		served <- nil
	}()
	select {
	case err := <-served:
		if err != nil {
			t.Fatal(err)
		}
	case err := <-runaway:
		t.Fatalf("the runaway ended (%v) before the other evaluations were served: they waited for it", err)
	case <-time.After(time.Minute): // a bound only against a hang: 20 evaluations take milliseconds
		t.Fatal("20 evaluations beside the runaway not done after a minute")
	}
	waitForEvaluations(t, clk, 1) // the runaway alone is running still
	clk.Step(limit)
	if err := <-runaway; err == nil || err.Error() != runaways[0].want {
		t.Fatalf("the runaway's error = %v, want %q", err, runaways[0].want)
	}
}
