package stamp

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/surveyor-dev/surveyor/pkg/expr"
)

const (
	tagOpen  = "$("
	tagClose = ")$"
)

// Error is why a template could not be stamped. The caller reports it with reason
// TemplateStampFailure.
type Error struct {
	// Tag is the path inside $( )$ as the template wrote it; empty when the template itself could
	// not be decoded.
	Tag string
	// Location is where in the template the tag is, e.g. .spec.template.spec.containers[0].image.
	Location string
	// Err wraps expr.ErrNotFound when the tag's path led to no value, or is an
	// *expr.SyntaxError when the path does not parse.
	Err error
}

// Error implements error, e.g.
// "jsonpath [workload.spec.image] at .spec.template.spec.containers[0].image: image is not found".
func (e *Error) Error() string {
	var syntax *expr.SyntaxError
	switch {
	case e.Tag == "" && e.Location == "":
		return e.Err.Error()
	case errors.As(e.Err, &syntax):
		return fmt.Sprintf("invalid jsonpath [%s] at %s: %v", e.Tag, e.Location, syntax.Err)
	default:
		return fmt.Sprintf("jsonpath [%s] at %s: %v", e.Tag, e.Location, e.Err)
	}
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Stamp decodes template, the raw JSON of a template object, and replaces its $(path)$ tags with
// values read from context (see NewContext). Only values are interpolated, never map keys, at any
// depth.
//
// A string that is exactly one tag becomes the typed value at the path: a number, bool, map, list,
// string or null. Tags inside a longer string are replaced by the value's expr.ValueString: a
// string as it is, a number in plain decimal, null as nothing, a map or list as JSON. A "$(" without a closing ")$" is left as written, so shell and Tekton $(...) survive.
// A path is jsonpath over the context (workload.metadata.name, params.replicas,
// workload.metadata.labels['app.kubernetes.io/name']); a path that selects several values yields a
// list.
//
// A tag whose path leads nowhere or does not parse is an *Error naming the tag and its location;
// when several tags fail, the one at the first location in sort order is reported, so the message
// is stable. Numbers keep the int64/float64 split of unstructured objects, and the result holds only
// the types unstructured.DeepCopy accepts.
func Stamp(template []byte, context map[string]any) (*unstructured.Unstructured, error) {
	trimmed := bytes.TrimSpace(template)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, &Error{Err: errors.New("template must be a JSON object")}
	}
	var obj map[string]any
	if err := utiljson.Unmarshal(trimmed, &obj); err != nil {
		return nil, &Error{Err: fmt.Errorf("decoding template: %w", err)}
	}
	s := stamper{context: context}
	s.object(obj)
	if len(s.errs) > 0 {
		slices.SortFunc(s.errs, func(a, b *Error) int { return strings.Compare(a.Location, b.Location) })
		return nil, s.errs[0]
	}
	return &unstructured.Unstructured{Object: obj}, nil
}

// stamper interpolates a freshly decoded template in place. loc is the path to the value being
// visited, formatted only when a tag fails.
type stamper struct {
	context map[string]any
	loc     []segment
	errs    []*Error
}

type segment struct {
	key     string
	index   int
	isIndex bool
}

func (s *stamper) object(m map[string]any) {
	for k, v := range m {
		s.loc = append(s.loc, segment{key: k})
		m[k] = s.value(v)
		s.loc = s.loc[:len(s.loc)-1]
	}
}

func (s *stamper) value(v any) any {
	switch v := v.(type) {
	case map[string]any:
		s.object(v)
	case []any:
		for i, item := range v {
			s.loc = append(s.loc, segment{index: i, isIndex: true})
			v[i] = s.value(item)
			s.loc = s.loc[:len(s.loc)-1]
		}
	case string:
		if strings.Contains(v, tagOpen) {
			return s.interpolate(v)
		}
	}
	return v
}

// interpolate replaces the tags of one string. On error it records the error and keeps the string.
func (s *stamper) interpolate(str string) any {
	if path, ok := wholeTag(str); ok {
		v, err := s.lookup(path)
		if err != nil {
			return str
		}
		return v
	}
	var b strings.Builder
	scan(str, func(text string) { b.WriteString(text) }, func(path string) {
		if v, err := s.lookup(path); err == nil {
			b.WriteString(expr.ValueString(v))
		}
	})
	return b.String()
}

// Tags are the paths of the $(path)$ tags in str, in order, as Stamp reads them.
func Tags(str string) []string {
	if path, ok := wholeTag(str); ok {
		return []string{path}
	}
	var tags []string
	scan(str, func(string) {}, func(path string) { tags = append(tags, path) })
	return tags
}

// scan walks str, calling text with the text between tags and tag with each tag's path. A "$("
// without a closing ")$" is text.
func scan(str string, text, tag func(string)) {
	rest := str
	for {
		open := strings.Index(rest, tagOpen)
		if open < 0 {
			break
		}
		end := strings.Index(rest[open+len(tagOpen):], tagClose)
		if end < 0 {
			break
		}
		text(rest[:open])
		tag(rest[open+len(tagOpen) : open+len(tagOpen)+end])
		rest = rest[open+len(tagOpen)+end+len(tagClose):]
	}
	text(rest)
}

// wholeTag reports whether str is exactly one tag, and its path.
func wholeTag(str string) (string, bool) {
	if !strings.HasPrefix(str, tagOpen) || !strings.HasSuffix(str, tagClose) || len(str) < len(tagOpen)+len(tagClose) {
		return "", false
	}
	inner := str[len(tagOpen) : len(str)-len(tagClose)]
	if strings.Contains(inner, tagClose) {
		return "", false
	}
	return inner, true
}

func (s *stamper) lookup(tag string) (any, error) {
	path, err := expr.ParsePath(tag)
	if err != nil {
		s.fail(tag, err)
		return nil, err
	}
	v, err := path.Get(s.context)
	if err != nil {
		s.fail(tag, err)
		return nil, err
	}
	v, err = jsonValue(v)
	if err != nil {
		s.fail(tag, err)
		return nil, err
	}
	return v, nil
}

func (s *stamper) fail(tag string, err error) {
	s.errs = append(s.errs, &Error{Tag: tag, Location: formatLocation(s.loc), Err: err})
}

var plainKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// formatLocation writes a location as a jsonpath: .spec.containers[0].image, with keys that are not
// plain identifiers quoted: .metadata.annotations['example.com/x'].
func formatLocation(loc []segment) string {
	if len(loc) == 0 {
		return "."
	}
	var b strings.Builder
	for _, seg := range loc {
		switch {
		case seg.isIndex:
			b.WriteString("[" + strconv.Itoa(seg.index) + "]")
		case plainKey.MatchString(seg.key):
			b.WriteString("." + seg.key)
		default:
			b.WriteString("['" + seg.key + "']")
		}
	}
	return b.String()
}
