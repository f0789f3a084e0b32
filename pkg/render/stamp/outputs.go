package stamp

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/expr"
)

// OutputError is an output that could not be read from a stamped object. When Err wraps
// expr.ErrNotFound the value is missing or null, which the caller reports as
// ResourceSubmitted=Unknown MissingValueAtPath; otherwise the template's path is malformed
// (Err is an *expr.SyntaxError).
type OutputError struct {
	// Name is the output, e.g. v1alpha1.OutputURL.
	Name string
	// Path is the template's jsonpath, as written.
	Path string
	// Err is why the value could not be read.
	Err error
}

// Error implements error.
func (e *OutputError) Error() string {
	return fmt.Sprintf("output %s: jsonpath [%s]: %v", e.Name, e.Path, e.Err)
}

// Unwrap returns the underlying error.
func (e *OutputError) Unwrap() error { return e.Err }

// errNull is why a null value does not count as an output.
var errNull = fmt.Errorf("value is null: %w", expr.ErrNotFound)

// ReadOutputs reads every output from obj, keyed by name. The values are copies, so they may be
// kept after obj changes, e.g. when obj came from an informer cache. The first output that cannot be
// read, including a null value, is an *OutputError and no values are returned.
func ReadOutputs(obj *unstructured.Unstructured, paths []v1alpha1.OutputPath) (map[string]any, error) {
	values := make(map[string]any, len(paths))
	for _, p := range paths {
		v, err := readOutput(obj, p)
		if err != nil {
			return nil, &OutputError{Name: p.Name, Path: p.Path, Err: err}
		}
		values[p.Name] = v
	}
	return values, nil
}

func readOutput(obj *unstructured.Unstructured, p v1alpha1.OutputPath) (any, error) {
	if obj == nil {
		return nil, errors.New("no object")
	}
	v, err := expr.Get(p.Path, obj.Object)
	if err != nil {
		return nil, err
	}
	if v == nil {
		return nil, errNull
	}
	return jsonValue(v)
}
