package health

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"k8s.io/client-go/util/jsonpath"
)

// Path is a jsonpath expression parsed once and cached by its text. A Path is safe for concurrent
// use. Find it with ParsePath.
//
// Most paths are answered by a plan compiled from client-go's parse tree (see pathfast.go). The
// others, and the cases a plan gives up on, run client-go's evaluator. Its *jsonpath.JSONPath keeps
// evaluation state in itself (range counters; it even rewrites its parse tree while it walks a
// {range}), so one instance cannot serve two goroutines at once: a Path keeps a free list of
// instances, parsing a new one only when every instance is busy. In steady state nothing is parsed;
// PathParseCount shows it.
type Path struct {
	text     string // the text as the user wrote it, quoted in errors
	template string // the text in jsonpath template form, {.a.b}
	plan     plan   // nil when the path needs client-go's evaluator
	// reusable is false for a path with {range}: client-go's evaluator leaves its parse tree cut
	// short after walking a range, so such a path is parsed afresh for every evaluation.
	reusable bool

	mu   sync.Mutex
	idle []*jsonpath.JSONPath
}

var (
	pathCache  sync.Map // text -> *Path
	pathParses atomic.Uint64
)

// PathParseCount returns how many times a jsonpath expression was parsed since the process started.
// It grows when a new expression text is seen, and stays flat in steady state.
func PathParseCount() uint64 { return pathParses.Load() }

// ParsePath returns the cached Path for text, parsing it on first use. Text may be written as
// `status.x`, `.status.x` or `{.status.x}`, and may hold filters such as
// `status.conditions[?(@.type=="Ready")].status`. A text that does not parse is not cached, and the
// error quotes it. The cache keeps every distinct text it is given: paths come from templates, so
// their number is bounded by what platform teams write.
func ParsePath(text string) (*Path, error) {
	if p, ok := pathCache.Load(text); ok {
		return p.(*Path), nil
	}
	p := &Path{text: text, template: pathTemplate(text)}
	pathParses.Add(1)
	if p.template == "" {
		return nil, fmt.Errorf("invalid jsonpath %q: empty path", text)
	}
	tree, err := jsonpath.Parse("path", p.template)
	if err != nil {
		return nil, fmt.Errorf("invalid jsonpath %q: %w", text, err)
	}
	p.plan = compilePlan(tree.Root)
	p.reusable = !hasRange(tree.Root)
	actual, _ := pathCache.LoadOrStore(text, p)
	return actual.(*Path), nil
}

// pathTemplate turns the accepted spellings of a path into client-go's template form.
func pathTemplate(text string) string {
	t := strings.TrimSpace(text)
	switch {
	case t == "":
		return t
	case strings.HasPrefix(t, "{"):
		return t
	case strings.HasPrefix(t, "."), strings.HasPrefix(t, "["), strings.HasPrefix(t, "$"):
		return "{" + t + "}"
	default:
		return "{." + t + "}"
	}
}

// String returns the path as the user wrote it.
func (p *Path) String() string { return p.text }

// hasRange reports whether a parse tree holds {range} or {end}.
func hasRange(root *jsonpath.ListNode) bool {
	for _, n := range root.Nodes {
		if list, ok := n.(*jsonpath.ListNode); ok {
			for _, m := range list.Nodes {
				if _, ok := m.(*jsonpath.IdentifierNode); ok {
					return true
				}
			}
		}
	}
	return false
}

func (p *Path) get() (*jsonpath.JSONPath, error) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		jp := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return jp, nil
	}
	p.mu.Unlock()
	pathParses.Add(1)
	jp := jsonpath.New("path")
	if err := jp.Parse(p.template); err != nil {
		return nil, fmt.Errorf("invalid jsonpath %q: %w", p.text, err)
	}
	return jp, nil
}

func (p *Path) put(jp *jsonpath.JSONPath) {
	p.mu.Lock()
	p.idle = append(p.idle, jp)
	p.mu.Unlock()
}

// Find returns the values at the path in data, usually an unstructured object's content. JSON null
// values are left out, so a path that holds only null yields no values. An error means the path
// cannot be read: a key is missing, an index is out of range, or a value has the wrong shape. A
// filter that selects nothing yields no values and no error.
func (p *Path) Find(data any) ([]any, error) {
	if p.plan != nil {
		out, err, ok := p.plan.find(data)
		if ok {
			if err != nil {
				return nil, fmt.Errorf("cannot read jsonpath %q: %w", p.text, err)
			}
			return out, nil
		}
	}
	jp, err := p.get()
	if err != nil {
		return nil, err
	}
	results, err := jp.FindResults(data)
	if p.reusable {
		p.put(jp)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read jsonpath %q: %w", p.text, err)
	}
	var out []any
	for _, set := range results {
		for _, v := range set {
			if x, ok := present(v); ok {
				out = append(out, x)
			}
		}
	}
	return out, nil
}

// present unwraps a jsonpath result, reporting false for JSON null.
func present(v reflect.Value) (any, bool) {
	for v.IsValid() && (v.Kind() == reflect.Interface || v.Kind() == reflect.Pointer) {
		if v.IsNil() {
			return nil, false
		}
		v = v.Elem()
	}
	if !v.IsValid() || !v.CanInterface() {
		return nil, false
	}
	x := v.Interface()
	return x, x != nil
}

// ValueString is the string form a value is compared and reported with: a string as it is,
// numbers and booleans as JSON writes them (3, 2.5, true), and lists and maps as JSON. This is
// what makes `values: ["3"]` and `values: ["true"]` match numbers and booleans.
func ValueString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case int:
		return strconv.Itoa(x)
	case int32:
		return strconv.FormatInt(int64(x), 10)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case json.Number:
		return x.String()
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
