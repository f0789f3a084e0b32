package expr

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

// versioned returns an object with a uid and resourceVersion, as the API server returns it.
func versioned(uid, rv string, replicas int64) map[string]any {
	return map[string]any{
		"metadata": map[string]any{"uid": uid, "resourceVersion": rv},
		"status":   map[string]any{"replicas": replicas},
	}
}

// fresh returns a uid no earlier test used, so that -count=N starts with an empty memo.
func fresh(prefix string) string {
	return prefix + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
}

// TestMemo shows that a program is not evaluated again over an object version it has seen: the
// objects below change their content in place without a new resourceVersion, which no object
// from the API server does, so an evaluation that ran again would see it.
func TestMemo(t *testing.T) {
	p, err := CompileCEL(`object.status.replicas * 2`, ResultAny)
	if err != nil {
		t.Fatal(err)
	}
	eval := func(t *testing.T, obj map[string]any) (any, uint64) {
		t.Helper()
		s := NewScopeWithBudget(obj, 1000)
		v, err := p.Eval(s)
		if err != nil {
			t.Fatal(err)
		}
		return v, s.Remaining()
	}

	t.Run("same version", func(t *testing.T) {
		obj := versioned(fresh("memo"), "10", 1)
		first, remaining := eval(t, obj)
		obj["status"].(map[string]any)["replicas"] = int64(5)
		again, remainingAgain := eval(t, obj)
		if first != int64(2) || again != int64(2) {
			t.Errorf("results %v and %v, want 2 both times", first, again)
		}
		if remaining != remainingAgain || remaining == 1000 {
			t.Errorf("remaining budget %d then %d, want the same cost charged both times", remaining, remainingAgain)
		}
	})
	t.Run("new version", func(t *testing.T) {
		uid := fresh("memo")
		eval(t, versioned(uid, "10", 1))
		if got, _ := eval(t, versioned(uid, "11", 5)); got != int64(10) {
			t.Errorf("result %v, want 10", got)
		}
	})
	t.Run("no version", func(t *testing.T) {
		obj := versioned("", "", 1)
		eval(t, obj)
		obj["status"].(map[string]any)["replicas"] = int64(5)
		if got, _ := eval(t, obj); got != int64(10) {
			t.Errorf("result %v, want 10", got)
		}
	})
	t.Run("errors are remembered with their cost", func(t *testing.T) {
		obj := versioned(fresh("memo"), "10", 1)
		delete(obj, "status")
		s := NewScopeWithBudget(obj, 1000)
		if _, err := p.Eval(s); !errors.Is(err, ErrMissingData) {
			t.Fatalf("error %v, want ErrMissingData", err)
		}
		obj["status"] = map[string]any{"replicas": int64(1)}
		s2 := NewScopeWithBudget(obj, 1000)
		if _, err := p.Eval(s2); !errors.Is(err, ErrMissingData) {
			t.Fatalf("error %v, want the remembered ErrMissingData", err)
		}
		if s.Remaining() != s2.Remaining() {
			t.Errorf("remaining budget %d then %d, want the same", s.Remaining(), s2.Remaining())
		}
	})
}

// TestMemoForgetsTimeouts shows that an evaluation the clock stopped is evaluated again: a
// loaded machine must not make an expression fail for as long as its object does not change.
func TestMemoForgetsTimeouts(t *testing.T) {
	// 90,000 steps: more than cel-go runs between two checks of the time, which a limit of
	// zero has run out before the evaluation starts, whatever the scheduler does.
	p, err := CompileCEL(`lists.range(300).all(i, lists.range(300).all(j, i != j || i == j))`, ResultBool)
	if err != nil {
		t.Fatal(err)
	}
	obj := versioned(fresh("memo"), "1", 1)
	defer setCallTimeLimit(0)()
	if _, err := p.EvalBool(NewScope(obj)); !errors.Is(err, ErrCostLimitExceeded) {
		t.Fatalf("error %v, want ErrCostLimitExceeded", err)
	}
	setCallTimeLimit(time.Minute)
	if ok, err := p.EvalBool(NewScope(obj)); err != nil || !ok {
		t.Errorf("EvalBool = %v, %v; want true, nil", ok, err)
	}
}

// TestMemoKeepsShortStringsOnly: a string result longer than maxMemoString is not kept, so
// the memo's size in bytes does not follow the objects'; a short one is.
func TestMemoKeepsShortStringsOnly(t *testing.T) {
	p, err := CompileCEL(`object.data.text`, ResultString)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		size int
		kept bool
	}{{"short", 10, true}, {"at the bound", maxMemoString, true}, {"long", maxMemoString + 1, false}} {
		t.Run(tc.name, func(t *testing.T) {
			obj := versioned(fresh("memo-string"), "1", 1)
			obj["data"] = map[string]any{"text": strings.Repeat("a", tc.size)}
			if _, err := p.EvalString(NewScope(obj)); err != nil {
				t.Fatal(err)
			}
			// Changed in place, under the same version: only an evaluation run again sees it.
			obj["data"] = map[string]any{"text": "changed"}
			got, err := p.EvalString(NewScope(obj))
			if err != nil {
				t.Fatal(err)
			}
			if kept := got != "changed"; kept != tc.kept {
				t.Errorf("a %d-byte result was kept: %t, want %t", tc.size, kept, tc.kept)
			}
		})
	}
}

// TestMemoGenerations shows that the memo is bounded: an object version no scope asks for
// through two generations is forgotten, and one that is asked for is kept.
func TestMemoGenerations(t *testing.T) {
	m := &resultMemo{current: make(map[objectVersion]*objectResults)}
	kept, dropped := versioned("kept", "1", 1), versioned("dropped", "1", 1)
	keptResults, droppedResults := m.forObject(kept), m.forObject(dropped)
	for i := range 2 * maxMemoObjects {
		m.forObject(versioned("filler", strconv.Itoa(i), 1))
		if i%(maxMemoObjects/2) == 0 {
			m.forObject(kept)
		}
	}
	if len(m.current) > maxMemoObjects || len(m.previous) > maxMemoObjects {
		t.Errorf("generations of %d and %d versions, want at most %d each", len(m.current), len(m.previous), maxMemoObjects)
	}
	if m.forObject(kept) != keptResults {
		t.Error("a version asked for in every generation was forgotten")
	}
	if m.forObject(dropped) == droppedResults {
		t.Error("a version not asked for in two generations is still there")
	}
}
