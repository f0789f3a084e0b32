package stamp

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/expr"
)

// The output names, as ResourceStatus.Outputs and the context's inputs spell them.
const (
	// OutputURL is a ClusterSourceTemplate's url, read with urlPath.
	OutputURL = "url"
	// OutputRevision is a ClusterSourceTemplate's revision, read with revisionPath.
	OutputRevision = "revision"
	// OutputImage is a ClusterImageTemplate's image, read with imagePath.
	OutputImage = "image"
	// OutputConfig is a ClusterConfigTemplate's config, read with configPath.
	OutputConfig = "config"
)

// OutputPath is one output of a template and the jsonpath it is read from in the stamped object.
type OutputPath struct {
	// Name is the output's name, e.g. OutputURL.
	Name string
	// Path is the template's jsonpath, e.g. .status.artifact.url.
	Path string
}

// OutputPaths returns the outputs of a template, given as a pointer to one of the template kinds, in
// the order they are reported: url then revision, image, or config. A ClusterTemplate, a
// ClusterDeploymentTemplate or anything else has none.
func OutputPaths(template any) []OutputPath {
	switch t := template.(type) {
	case *v1alpha1.ClusterSourceTemplate:
		return []OutputPath{{Name: OutputURL, Path: t.Spec.URLPath}, {Name: OutputRevision, Path: t.Spec.RevisionPath}}
	case *v1alpha1.ClusterImageTemplate:
		return []OutputPath{{Name: OutputImage, Path: t.Spec.ImagePath}}
	case *v1alpha1.ClusterConfigTemplate:
		return []OutputPath{{Name: OutputConfig, Path: t.Spec.ConfigPath}}
	}
	return nil
}

// OutputError is an output that could not be read from a stamped object. When Err wraps
// expr.ErrNotFound the value is missing or null, which the caller reports as
// ResourceSubmitted=Unknown MissingValueAtPath; otherwise the template's path is malformed
// (Err is an *expr.SyntaxError).
type OutputError struct {
	// Name is the output, e.g. OutputURL.
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
func ReadOutputs(obj *unstructured.Unstructured, paths []OutputPath) (map[string]any, error) {
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

func readOutput(obj *unstructured.Unstructured, p OutputPath) (any, error) {
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
