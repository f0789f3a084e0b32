package fieldpath

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"k8s.io/client-go/util/jsonpath"
)

// ErrNotFound is wrapped by every error that means a valid path led to no value: a missing map key,
// an index out of range, a filter that matched nothing. Test for it with errors.Is.
var ErrNotFound = errors.New("not found")

// SyntaxError is a path that cannot be parsed. Its message quotes the path as the user wrote it.
type SyntaxError struct {
	// Path is the path as the user wrote it.
	Path string
	// Err is the parser's complaint.
	Err error
}

// Error implements error.
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid jsonpath %q: %v", e.Path, e.Err)
}

// Unwrap returns the parser's error.
func (e *SyntaxError) Unwrap() error { return e.Err }

// notFoundError keeps client-go's own wording ("image is not found") while matching ErrNotFound.
type notFoundError struct{ msg string }

func (e notFoundError) Error() string        { return e.msg }
func (e notFoundError) Is(target error) bool { return target == ErrNotFound }

// Path is a parsed, reusable jsonpath. The zero value is not usable; get one from Compile.
type Path struct {
	text string
	pool sync.Pool // of *jsonpath.JSONPath, each parsed from the normalized text
}

// String returns the path as the user wrote it.
func (p *Path) String() string { return p.text }

// maxCached bounds the cache. Paths come from cluster objects, so the set is small and stable; the
// bound only guards against unbounded growth as templates are edited over months. Dropping the
// whole cache when it is full is crude, but costs one re-parse per live path.
const maxCached = 4096

var cache = struct {
	sync.RWMutex
	paths map[string]*Path
}{paths: map[string]*Path{}}

// Compile parses path, or returns the cached parse of the same text. A path that does not parse,
// or holds more than one jsonpath expression, is a *SyntaxError.
func Compile(path string) (*Path, error) {
	cache.RLock()
	p, ok := cache.paths[path]
	cache.RUnlock()
	if ok {
		return p, nil
	}
	normalized := Normalize(path)
	first, err := parse(normalized)
	if err != nil {
		return nil, &SyntaxError{Path: path, Err: err}
	}
	p = &Path{text: path}
	p.pool.New = func() any {
		// The text parsed once already, so parsing it again cannot fail.
		j, _ := parse(normalized)
		return j
	}
	p.pool.Put(first)

	cache.Lock()
	if len(cache.paths) >= maxCached {
		cache.paths = map[string]*Path{}
	}
	if existing, ok := cache.paths[path]; ok {
		p = existing
	} else {
		cache.paths[path] = p
	}
	cache.Unlock()
	return p, nil
}

func parse(text string) (*jsonpath.JSONPath, error) {
	if text == "{.}" {
		return nil, errors.New("path is empty")
	}
	parsed, err := jsonpath.Parse("", text)
	if err != nil {
		return nil, err
	}
	// One path is one action. Several actions ("a}{.b") would yield several result sets, and the
	// range and end identifiers make FindResults rewrite the parsed nodes in place.
	if len(parsed.Root.Nodes) != 1 {
		return nil, errors.New("must be a single jsonpath expression")
	}
	action, ok := parsed.Root.Nodes[0].(*jsonpath.ListNode)
	if !ok {
		return nil, errors.New("must be a single jsonpath expression")
	}
	for _, n := range action.Nodes {
		if id, ok := n.(*jsonpath.IdentifierNode); ok {
			return nil, fmt.Errorf("%q is not allowed in a path", id.Name)
		}
	}
	j := jsonpath.New("")
	if err := j.Parse(text); err != nil {
		return nil, err
	}
	return j, nil
}

// dictKey finds a bracketed, quoted key: ['app.kubernetes.io/name'] or ["app.kubernetes.io/name"].
var dictKey = regexp.MustCompile(`\[\s*(?:'([^']*)'|"([^"]*)")\s*\]`)

// Normalize returns the client-go template for a user's path: surrounding braces and one leading
// dot are optional in the input and always present in the output, and bracketed quoted keys become
// escaped fields, so that labels['app.kubernetes.io/name'] reads the one key it names.
func Normalize(path string) string {
	p := trimUnescaped(path)
	if strings.HasPrefix(p, "{") && strings.HasSuffix(p, "}") {
		p = trimUnescaped(p[1 : len(p)-1])
	}
	p = strings.TrimPrefix(p, "$")
	descent := strings.HasPrefix(p, "..")
	p = strings.TrimPrefix(p, ".")
	p = dictKey.ReplaceAllStringFunc(p, func(m string) string {
		sub := dictKey.FindStringSubmatch(m)
		key := sub[1] + sub[2]
		if key == "" {
			return m // no field name can spell an empty key; left for the parser to refuse
		}
		return "." + escapeField(key)
	})
	if strings.HasPrefix(p, ".") && !descent {
		// A leading ['key'] became .key: the path already starts at the root.
		return "{" + p + "}"
	}
	return "{." + p + "}"
}

// trimUnescaped trims white space around s but keeps a trailing one escaped with a
// backslash, which belongs to a field name (so Normalize is idempotent).
func trimUnescaped(s string) string {
	s = strings.TrimLeft(s, " \t\n\r")
	for len(s) > 0 && strings.ContainsRune(" \t\n\r", rune(s[len(s)-1])) {
		if len(s) > 1 && s[len(s)-2] == '\\' {
			break
		}
		s = s[:len(s)-1]
	}
	return s
}

// escapeField escapes the characters client-go's parser ends a field name at.
func escapeField(key string) string {
	var b strings.Builder
	for _, r := range key {
		switch r {
		case '.', ',', '[', ']', '$', '@', '{', '}', ' ', '\t', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Find returns every value the path selects in obj, in order. Finding nothing is an error wrapping
// ErrNotFound; a null value is found, as nil.
func (p *Path) Find(obj any) ([]any, error) {
	j := p.pool.Get().(*jsonpath.JSONPath)
	defer p.pool.Put(j)
	sets, err := j.FindResults(obj)
	if err != nil {
		// A valid path failing to evaluate always means the data is not shaped as the path
		// expects: a missing key, an index out of range, a field on a list.
		return nil, notFoundError{msg: err.Error()}
	}
	var values []any
	for _, set := range sets {
		for _, v := range set {
			if !v.IsValid() {
				continue
			}
			values = append(values, v.Interface())
		}
	}
	if len(values) == 0 {
		return nil, notFoundError{msg: "no value matches the path"}
	}
	return values, nil
}

// Get returns the value the path selects in obj: the value itself when there is one, a []any of
// them when the path selects several (a wildcard or a filter). Finding nothing is an error wrapping
// ErrNotFound.
func (p *Path) Get(obj any) (any, error) {
	values, err := p.Find(obj)
	if err != nil {
		return nil, err
	}
	if len(values) == 1 {
		return values[0], nil
	}
	return values, nil
}

// Get compiles path and returns the value it selects in obj; see Compile and Path.Get.
func Get(path string, obj any) (any, error) {
	p, err := Compile(path)
	if err != nil {
		return nil, err
	}
	return p.Get(obj)
}
