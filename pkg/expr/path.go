package expr

import (
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"

	"k8s.io/client-go/util/jsonpath"
)

// ErrNotFound is wrapped by every error that means a valid path led to no value: a missing map
// key, an index out of range, a value of the wrong shape, a filter that matched nothing. Test for
// it with errors.Is.
var ErrNotFound = errors.New("not found")

// SyntaxError is a path that cannot be parsed. Its message quotes the path as the user wrote it.
type SyntaxError struct {
	// Path is the path as the user wrote it.
	Path string
	// Err is the parser's complaint.
	Err error
}

// Error returns `invalid jsonpath "<path>": <complaint>`.
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid jsonpath %q: %v", e.Path, e.Err)
}

// Unwrap returns the parser's complaint.
func (e *SyntaxError) Unwrap() error { return e.Err }

// notFoundError keeps client-go's own wording ("image is not found"), which users see in stamp
// and output messages, while matching ErrNotFound.
type notFoundError struct{ msg string }

func (e notFoundError) Error() string        { return e.msg }
func (e notFoundError) Is(target error) bool { return target == ErrNotFound }

// errNoValue is a valid path that selected nothing, e.g. a filter that matched no entry.
var errNoValue = notFoundError{msg: "no value matches the path"}

// Path is a jsonpath parsed once and cached by its text. A Path is safe for concurrent use; find
// one with ParsePath.
//
// Most paths are answered by a plan compiled from client-go's parse tree (see pathfast.go). The
// others, and the cases a plan gives up on, run client-go's evaluator. Its *jsonpath.JSONPath
// keeps evaluation state in itself, so one instance cannot serve two goroutines at once: a Path
// keeps a free list of instances and parses a new one only when every instance is busy. The free
// list is never emptied (a sync.Pool would be, at every GC), so in steady state nothing is parsed;
// PathParseCount shows it.
type Path struct {
	text     string // as the user wrote it, quoted in errors
	template string // normalized, in client-go's template form {.a.b}
	plan     plan   // nil when the path needs client-go's evaluator

	mu   sync.Mutex
	idle []*jsonpath.JSONPath
}

// maxCachedPaths bounds the path cache. Paths come from templates, supply chains and
// deliveries, so the live set is small; the bound keeps months of template edits, or a client
// that writes a new path per object, from growing the cache without end.
const maxCachedPaths = 4096

var (
	pathCache  = newCache[*Path](maxCachedPaths)
	pathParses atomic.Uint64
)

// PathParseCount returns how many times a jsonpath was parsed since the process started. It grows
// when a new path text is seen, and stays flat in steady state.
func PathParseCount() uint64 { return pathParses.Load() }

// ParsePath returns the cached Path for text, parsing it on first use. A path is one jsonpath
// expression, written in any of the spellings normalize accepts: status.x, .status.x, {.status.x},
// $.status.x, with keys in brackets (metadata.labels['app.kubernetes.io/name']) and filters
// (status.conditions[?(@.type=="Ready")].status). A path that does not parse is a *SyntaxError
// quoting text, and is not cached.
func ParsePath(text string) (*Path, error) {
	if p, ok := pathCache.get(text); ok {
		return p, nil
	}
	pathParses.Add(1)
	template := normalize(text)
	tree, err := parseTemplate(template)
	if err != nil {
		return nil, &SyntaxError{Path: text, Err: err}
	}
	p := &Path{text: text, template: template, plan: compilePlan(tree.Root)}
	return pathCache.add(text, p), nil
}

// parseTemplate parses a normalized path and checks that it is one jsonpath expression. Several
// expressions ({.a}{.b}) would yield several result sets, and {range} and {end} make client-go's
// evaluator rewrite its parse tree while it walks: they belong to kubectl's output templates, not
// to a path that names values.
func parseTemplate(template string) (*jsonpath.Parser, error) {
	if template == "{.}" {
		return nil, errors.New("empty path")
	}
	tree, err := jsonpath.Parse("path", template)
	if err != nil {
		return nil, err
	}
	if len(tree.Root.Nodes) != 1 {
		return nil, errors.New("must be a single jsonpath expression")
	}
	action, ok := tree.Root.Nodes[0].(*jsonpath.ListNode)
	if !ok {
		return nil, errors.New("must be a single jsonpath expression")
	}
	for _, n := range action.Nodes {
		if id, ok := n.(*jsonpath.IdentifierNode); ok {
			return nil, fmt.Errorf("%q is not allowed in a path", id.Name)
		}
	}
	if n := recursiveDescents(action); n > 1 {
		return nil, fmt.Errorf("has %d recursive descents (..), over the limit of 1", n)
	}
	return tree, nil
}

// recursiveDescents counts the recursive descents (..) in a parse tree, filters included. One
// finds every value under the ones before it, in proportion to the object; each further one
// does so again from every value found, so k of them find as many as the object's size to the
// power k: "..a..b..c" over an object of 10,000 values would be 10^12 values.
func recursiveDescents(list *jsonpath.ListNode) int {
	n := 0
	for _, node := range list.Nodes {
		switch node := node.(type) {
		case *jsonpath.RecursiveNode:
			n++
		case *jsonpath.ListNode:
			n += recursiveDescents(node)
		case *jsonpath.FilterNode:
			n += recursiveDescents(node.Left) + recursiveDescents(node.Right)
		case *jsonpath.UnionNode:
			for _, u := range node.Nodes {
				n += recursiveDescents(u)
			}
		}
	}
	return n
}

// String returns the path as the user wrote it.
func (p *Path) String() string { return p.text }

// Find returns every value the path selects in data, usually an unstructured object's content, in
// order. A JSON null is a value (nil): whether it counts is the caller's rule (MatchField does not
// count it, a tag copies it). Finding no value at all is an error wrapping ErrNotFound, worded as
// client-go words it ("image is not found").
func (p *Path) Find(data any) ([]any, error) {
	if p.plan != nil {
		if out, err, ok := p.plan.find(data); ok {
			if err == nil && len(out) == 0 {
				err = errNoValue
			}
			return out, err
		}
	}
	jp := p.get()
	results, err := jp.FindResults(data)
	p.put(jp)
	if err != nil {
		// A valid path failing to evaluate always means the data is not shaped as the path
		// expects: a missing key, an index out of range, a field of a list.
		return nil, notFoundError{msg: err.Error()}
	}
	out := values(results)
	if len(out) == 0 {
		return nil, errNoValue
	}
	return out, nil
}

// values flattens client-go's result sets into the values they hold.
func values(results [][]reflect.Value) []any {
	var out []any
	for _, set := range results {
		for _, v := range set {
			if x, ok := value(v); ok {
				out = append(out, x)
			}
		}
	}
	return out
}

// Get returns the value the path selects in data: the value itself when there is one, a []any of
// them when the path selects several (a wildcard or a filter). Finding nothing is an error
// wrapping ErrNotFound.
func (p *Path) Get(data any) (any, error) {
	values, err := p.Find(data)
	if err != nil {
		return nil, err
	}
	if len(values) == 1 {
		return values[0], nil
	}
	return values, nil
}

// Get parses text (see ParsePath) and returns the value it selects in data (see Path.Get).
func Get(text string, data any) (any, error) {
	p, err := ParsePath(text)
	if err != nil {
		return nil, err
	}
	return p.Get(data)
}

func (p *Path) get() *jsonpath.JSONPath {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		jp := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return jp
	}
	p.mu.Unlock()
	pathParses.Add(1)
	jp := jsonpath.New("path")
	// The template parsed when the Path was made, so it parses again.
	_ = jp.Parse(p.template)
	return jp
}

func (p *Path) put(jp *jsonpath.JSONPath) {
	p.mu.Lock()
	p.idle = append(p.idle, jp)
	p.mu.Unlock()
}

// value unwraps a client-go result. JSON null is the value nil; only a result that is no value at
// all (client-go yields none for JSON content) reports false.
func value(v reflect.Value) (any, bool) {
	for v.IsValid() && v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return nil, true
		}
		v = v.Elem()
	}
	if !v.IsValid() || !v.CanInterface() {
		return nil, false
	}
	return v.Interface(), true
}
