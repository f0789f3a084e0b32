package expr

import (
	"sync"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
)

// maxMemoObjects is how many object versions the results memo holds in each of its two
// generations.
const maxMemoObjects = 8192

// objectVersion identifies an object's content: the API server gives every write a new
// resourceVersion, so one uid and resourceVersion always name the same content.
type objectVersion struct {
	uid, resourceVersion string
}

// outcome is what one evaluation of one program over one object came to, as eval settles it
// with the scope: a value or an error, the cost to charge, and whether the program was stopped
// (charged in full whatever the budget has left).
type outcome struct {
	val      ref.Val
	err      error
	cost     uint64
	stopped  bool
	timedOut bool
}

// maxMemoString is the longest string result the memo keeps. A message is a line or two; a
// string result can be as large as a field of the object (a megabyte), and the memo holds
// 16,384 object versions, so without a bound its size in bytes would be the objects'.
const maxMemoString = 1024

// memoizable reports whether r may be given again for the same object version: an evaluation
// is a function of the program and the object, except when the clock stopped it, and only
// results that hold nothing of the object are kept, so the memo pins no old objects, and
// strings only up to maxMemoString bytes.
func (r outcome) memoizable() bool {
	if r.timedOut {
		return false
	}
	switch v := r.val.(type) {
	case types.String:
		return len(v) <= maxMemoString
	case nil, types.Bool, types.Int, types.Uint, types.Double, types.Null:
		return true
	}
	return false
}

// objectResults are the results of the programs evaluated over one object version. Scopes for
// the same version, in reconciles that run at once, share it.
type objectResults struct {
	mu        sync.Mutex
	byProgram map[*Program]outcome
}

func (o *objectResults) get(p *Program) (outcome, bool) {
	if o == nil {
		return outcome{}, false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	r, ok := o.byProgram[p]
	return r, ok
}

func (o *objectResults) put(p *Program, r outcome) {
	if o == nil || !r.memoizable() {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.byProgram[p] = r
}

// resultMemo remembers, per object version, what each program evaluated to, so that the health
// and condition rules of an object that has not changed since the last reconcile are not
// evaluated again: a reconcile reads every resource it stamped, and most of them are as they
// were. It keeps two generations: when the current one is full it becomes the previous one, and
// a version found there moves back to the current one. Versions no reconcile reads any more
// are gone after two generations, with no scan and no per-entry bookkeeping.
type resultMemo struct {
	mu                sync.Mutex
	current, previous map[objectVersion]*objectResults
}

var memo = &resultMemo{current: make(map[objectVersion]*objectResults)}

// forObject returns the results memoized for object, or nil when object does not say which
// version it is (it was not read from an API server).
func (m *resultMemo) forObject(object map[string]any) *objectResults {
	meta, _ := object["metadata"].(map[string]any)
	uid, _ := meta["uid"].(string)
	rv, _ := meta["resourceVersion"].(string)
	if uid == "" || rv == "" {
		return nil
	}
	v := objectVersion{uid: uid, resourceVersion: rv}
	m.mu.Lock()
	defer m.mu.Unlock()
	if o, ok := m.current[v]; ok {
		return o
	}
	o, ok := m.previous[v]
	if !ok {
		o = &objectResults{byProgram: make(map[*Program]outcome, 2)}
	}
	if len(m.current) >= maxMemoObjects {
		m.previous, m.current = m.current, make(map[objectVersion]*objectResults, maxMemoObjects)
	}
	m.current[v] = o
	return o
}
