package yttworker_test

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/surveyor-dev/surveyor/internal/yttworker"
	"github.com/surveyor-dev/surveyor/pkg/render/ytt"
)

// TestMain is the hook: the Pool runs this test binary as its workers.
func TestMain(m *testing.M) {
	yttworker.RunIfWorker()
	os.Exit(m.Run())
}

const configMap = "#@ load(\"@ytt:data\", \"data\")\nkind: ConfigMap\ndata:\n  n: #@ data.values.params.n\n"

// runaways are templates no worker survives, with the limit each exceeds.
var runaways = []struct {
	name, source, want string
}{
	{"a loop of 10^9", "#@ for i in range(1000000000):\n#@ end\nkind: ConfigMap\n", "ytt: evaluation exceeded the time limit of 2s"},
	{"a 4 GiB list", "#@ l = [0] * (1 << 28)\nkind: ConfigMap\n", "ytt: evaluation exceeded the memory limit of 256 MiB"},
	{"a list grown to 4 GiB", "#@ l = []\n#@ for i in range(1 << 28):\n#@   l.append(i)\n#@ end\nkind: ConfigMap\n", "ytt: evaluation exceeded the memory limit of 256 MiB"},
}

func newPool(t *testing.T) *yttworker.Pool {
	t.Helper()
	p, err := yttworker.New(yttworker.Options{Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

func TestPoolEvaluates(t *testing.T) {
	p := newPool(t)
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
	p := newPool(t)
	for _, tt := range runaways {
		t.Run(tt.name, func(t *testing.T) {
			if raceDetector && strings.Contains(tt.want, "memory limit") {
				t.Skip("the race detector's runtime does not fit the workers' memory limit; tested without it")
			}
			start := time.Now()
			_, err := p.Eval(tt.source, nil)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("error = %v, want %q", err, tt.want)
			}
			t.Logf("failed after %s", time.Since(start).Round(time.Millisecond))
			for i := range 3 { // more than the pool's size: every slot works again
				values := map[string]any{"params": map[string]any{"n": fmt.Sprint(i)}}
				if _, err := p.Eval(configMap, values); err != nil {
					t.Fatalf("after the runaway: %v", err)
				}
			}
		})
	}
}

// A runaway holds one worker; the other keeps evaluating.
func TestPoolServesOthersDuringARunaway(t *testing.T) {
	p := newPool(t)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, _ = p.Eval(runaways[0].source, nil)
	}()
	time.Sleep(200 * time.Millisecond)
	for i := range 20 {
		start := time.Now()
		if _, err := p.Eval(configMap, map[string]any{"params": map[string]any{"n": fmt.Sprint(i)}}); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("an evaluation took %s beside the runaway", d)
		}
	}
	wg.Wait()
}
