package expr

import (
	"fmt"
	"maps"
	"slices"

	"k8s.io/client-go/util/jsonpath"
)

// A plan walks unstructured content along a jsonpath parse tree without reflection.
//
// client-go's evaluator walks values through reflect and allocates a result slice per step, which
// makes a filter over five conditions cost a few microseconds. Paths are nearly always the simple
// kinds (.a.b, [n], [*] and [?(@.x=="v")]), so ParsePath also compiles client-go's parse tree into
// a plan of such steps when every node is one of them. The plan reproduces client-go's
// semantics exactly, quirks included, for JSON content (map[string]any, []any and scalars). Whenever
// it meets anything it would have to interpret (another Go type, a comparison with a non-string, an
// error other than a missing key) it gives up, and Find runs client-go's evaluator on the same data,
// so client-go stays the reference for every answer the plan does not give.
//
// One difference is deliberate: a wildcard (.*) or recursive descent (..) over an object visits
// its keys in sorted order, where client-go follows Go's random map order. The same object then
// always gives the same values in the same order, so a template stamping $(params..)$ stamps the
// same object every time (and is not re-applied on every reconcile).

type stepKind int

const (
	stepField     stepKind = iota // .key
	stepIndex                     // [n], n may be negative
	stepAll                       // [*]
	stepFilter                    // [?(@.a.b=="v")], [?(@.a.b!="v")], [?(@.a.b)]
	stepWildcard                  // .*
	stepRecursive                 // ..
)

type step struct {
	kind  stepKind
	key   string   // stepField
	index int      // stepIndex
	path  []string // stepFilter: the keys after @
	op    string   // stepFilter: ==, != or exists
	value string   // stepFilter: the string literal
}

// plan is the steps of a path's one expression.
type plan []step

// compilePlan returns the plan for a parse tree of one expression, or nil when a node is not one
// the plan handles.
func compilePlan(root *jsonpath.ListNode) plan {
	if len(root.Nodes) != 1 {
		return nil
	}
	list, ok := root.Nodes[0].(*jsonpath.ListNode)
	if !ok {
		return nil
	}
	steps, ok := compileSteps(list)
	if !ok || len(steps) == 0 {
		return nil
	}
	return steps
}

func compileSteps(list *jsonpath.ListNode) ([]step, bool) {
	var steps []step
	for _, n := range list.Nodes {
		switch n := n.(type) {
		case *jsonpath.FieldNode:
			steps = append(steps, step{kind: stepField, key: n.Value})
		case *jsonpath.ArrayNode:
			p := n.Params
			switch {
			case p[0].Known && p[1].Known && p[1].Derived && !p[2].Known:
				steps = append(steps, step{kind: stepIndex, index: p[0].Value})
			case !p[0].Known && !p[1].Known && !p[2].Known:
				steps = append(steps, step{kind: stepAll})
			default:
				return nil, false
			}
		case *jsonpath.FilterNode:
			s, ok := compileFilter(n)
			if !ok {
				return nil, false
			}
			steps = append(steps, s)
		case *jsonpath.WildcardNode:
			steps = append(steps, step{kind: stepWildcard})
		case *jsonpath.RecursiveNode:
			steps = append(steps, step{kind: stepRecursive})
		default:
			return nil, false
		}
	}
	return steps, true
}

func compileFilter(n *jsonpath.FilterNode) (step, bool) {
	s := step{kind: stepFilter, op: n.Operator}
	for _, l := range n.Left.Nodes {
		f, ok := l.(*jsonpath.FieldNode)
		if !ok {
			return step{}, false
		}
		s.path = append(s.path, f.Value)
	}
	switch n.Operator {
	case "exists":
		return s, len(n.Right.Nodes) == 0
	case "==", "!=":
		if len(n.Right.Nodes) != 1 {
			return step{}, false
		}
		t, ok := n.Right.Nodes[0].(*jsonpath.TextNode)
		if !ok {
			return step{}, false
		}
		s.value = t.Text
		return s, true
	}
	return step{}, false
}

// find runs the plan and returns the values it selects, JSON null included. ok is false when the
// plan gave up and client-go must answer; an error is worded as client-go words it.
func (p plan) find(data any) (values []any, err error, ok bool) {
	values = []any{data}
	for i := range p {
		values, err, ok = p[i].walk(values)
		if !ok || err != nil {
			return nil, notFound(err), ok
		}
	}
	return values, nil, true
}

func notFound(err error) error {
	if err == nil {
		return nil
	}
	return notFoundError{msg: err.Error()}
}

// isJSON reports whether v is a type unstructured content holds.
func isJSON(v any) bool {
	switch v.(type) {
	case nil, map[string]any, []any, string, bool, int64, float64:
		return true
	}
	return false
}

// walk applies one step to every value, as client-go's evalField, evalArray and evalFilter do.
func (s *step) walk(values []any) ([]any, error, bool) {
	var results []any
	switch s.kind {
	case stepField:
		if len(values) == 0 {
			return nil, nil, true
		}
		for _, v := range values {
			switch x := v.(type) {
			case nil:
			case map[string]any:
				if e, found := x[s.key]; found {
					results = append(results, e)
				}
			default:
				if !isJSON(v) {
					return nil, nil, false
				}
			}
		}
		if len(results) == 0 {
			return nil, fmt.Errorf("%s is not found", s.key), true
		}
	case stepIndex:
		for _, v := range values {
			if v == nil {
				continue
			}
			list, ok := v.([]any)
			if !ok {
				return nil, nil, false
			}
			i := s.index
			if i < 0 {
				i += len(list)
			}
			if i < 0 || i >= len(list) {
				return nil, nil, false
			}
			results = append(results, list[i])
		}
	case stepAll:
		for _, v := range values {
			if v == nil {
				continue
			}
			list, ok := v.([]any)
			if !ok {
				return nil, nil, false
			}
			if len(list) == 0 {
				return results, nil, true // client-go stops at an empty list
			}
			results = append(results, list...)
		}
	case stepFilter:
		for _, v := range values {
			list, ok := v.([]any)
			if !ok {
				return nil, nil, false
			}
			for _, e := range list {
				left, found, ok := lookup(e, s.path)
				if !ok {
					return nil, nil, false
				}
				if s.op == "exists" {
					if found {
						results = append(results, e)
					}
					continue
				}
				str, isString := left.(string)
				if !found || !isString {
					return nil, nil, false // client-go reports an error here
				}
				if (str == s.value) == (s.op == "==") {
					results = append(results, e)
				}
			}
		}
	case stepWildcard:
		for _, v := range values {
			switch x := v.(type) {
			case nil:
			case map[string]any:
				for _, k := range slices.Sorted(maps.Keys(x)) {
					results = append(results, x[k])
				}
			case []any:
				results = append(results, x...)
			case bool, int64, float64:
			default: // a string's bytes, or not JSON content
				return nil, nil, false
			}
		}
	case stepRecursive:
		for _, v := range values {
			var ok bool
			if results, ok = descend(results, v); !ok {
				return nil, nil, false
			}
		}
	}
	return results, nil, true
}

// descend appends v and everything below it as client-go's evalRecursive lists them, depth
// first: a value with children (an object, a list, a non-empty string, whose children are its
// bytes) and then its children's. Numbers, booleans, null, empty strings, objects and lists are
// not listed, having no children.
func descend(results []any, v any) ([]any, bool) {
	var children []any
	switch x := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			children = append(children, x[k])
		}
	case []any:
		children = x
	case string:
		if x != "" {
			results = append(results, x)
		}
		return results, true
	case nil, bool, int64, float64:
		return results, true
	default:
		return nil, false
	}
	if len(children) == 0 {
		return results, true
	}
	results = append(results, v)
	for _, c := range children {
		var ok bool
		if results, ok = descend(results, c); !ok {
			return nil, false
		}
	}
	return results, true
}

// lookup follows keys from v. found is false when a key is missing or a value on the way is null
// or not an object; ok is false for a value that is not JSON content.
func lookup(v any, keys []string) (value any, found, ok bool) {
	for _, k := range keys {
		switch x := v.(type) {
		case map[string]any:
			if v, found = x[k]; !found {
				return nil, false, true
			}
		default:
			return nil, false, isJSON(v)
		}
	}
	return v, true, true
}
