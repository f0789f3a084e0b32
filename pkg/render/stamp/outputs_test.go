package stamp_test

import (
	"errors"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/expr"
	"github.com/surveyor-dev/surveyor/pkg/render/stamp"
)

func gitRepository() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "source.toolkit.fluxcd.io/v1",
		"kind":       "GitRepository",
		"metadata":   map[string]any{"name": "petclinic"},
		"data":       map[string]any{"a": "1"},
		"status": map[string]any{
			"artifact": map[string]any{"url": "http://source/petclinic.tar.gz", "revision": "main@sha1:abc", "size": int64(42)},
			"empty":    nil,
		},
	}}
}

func TestReadOutputs(t *testing.T) {
	tests := []struct {
		name     string
		paths    []v1alpha1.OutputPath
		want     map[string]any
		wantErr  string
		errPath  string
		notFound bool
	}{
		{
			name:  "url and revision",
			paths: []v1alpha1.OutputPath{{Name: "url", Path: ".status.artifact.url"}, {Name: "revision", Path: "status.artifact.revision"}},
			want:  map[string]any{"url": "http://source/petclinic.tar.gz", "revision": "main@sha1:abc"},
		},
		{
			name:  "config map and number",
			paths: []v1alpha1.OutputPath{{Name: "config", Path: "{.data}"}, {Name: "size", Path: ".status.artifact.size"}},
			want:  map[string]any{"config": map[string]any{"a": "1"}, "size": int64(42)},
		},
		{
			name:     "missing value",
			paths:    []v1alpha1.OutputPath{{Name: "url", Path: ".status.artifact.url"}, {Name: "image", Path: ".status.latestImage"}},
			wantErr:  "output image: jsonpath [.status.latestImage]: latestImage is not found",
			errPath:  ".status.latestImage",
			notFound: true,
		},
		{
			name:     "null value",
			paths:    []v1alpha1.OutputPath{{Name: "image", Path: ".status.empty"}},
			wantErr:  "output image: jsonpath [.status.empty]: value is null: not found",
			errPath:  ".status.empty",
			notFound: true,
		},
		{
			name:    "invalid path",
			paths:   []v1alpha1.OutputPath{{Name: "image", Path: ".status["}},
			wantErr: `output image: jsonpath [.status[]: invalid jsonpath ".status[": unterminated array`,
			errPath: ".status[",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := gitRepository()
			got, err := stamp.ReadOutputs(obj, tt.paths)
			if tt.wantErr != "" {
				var outErr *stamp.OutputError
				if !errors.As(err, &outErr) {
					t.Fatalf("ReadOutputs() error = %v, want an *OutputError", err)
				}
				if err.Error() != tt.wantErr {
					t.Errorf("ReadOutputs() error = %q, want %q", err, tt.wantErr)
				}
				if outErr.Path != tt.errPath {
					t.Errorf("OutputError.Path = %q, want %q", outErr.Path, tt.errPath)
				}
				if got := errors.Is(err, expr.ErrNotFound); got != tt.notFound {
					t.Errorf("errors.Is(ErrNotFound) = %v, want %v", got, tt.notFound)
				}
				return
			}
			if err != nil {
				t.Fatalf("ReadOutputs() error = %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ReadOutputs() = %#v, want %#v", got, tt.want)
			}
			// The values are copies: changing the object later does not change them.
			obj.Object["data"].(map[string]any)["a"] = "2"
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ReadOutputs() values alias the object")
			}
		})
	}
}

func TestContains(t *testing.T) {
	live := map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata":   map[string]any{"name": "petclinic", "resourceVersion": "7", "labels": map[string]any{"a": "1"}},
		"spec": map[string]any{
			"replicas": int64(2),
			"ratio":    0.5,
			"paused":   false,
			"template": map[string]any{"spec": map[string]any{"containers": []any{
				map[string]any{"name": "workload", "image": "img", "terminationMessagePath": "/dev/termination-log"},
			}}},
		},
	}
	tests := []struct {
		name    string
		stamped map[string]any
		want    bool
	}{
		{name: "empty", stamped: map[string]any{}, want: true},
		{name: "subset of maps", stamped: map[string]any{"kind": "Deployment", "metadata": map[string]any{"name": "petclinic"}}, want: true},
		{
			name: "list elements are subsets",
			stamped: map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{
				map[string]any{"name": "workload", "image": "img"},
			}}}}},
			want: true,
		},
		{name: "int64 equals float64 of the same value", stamped: map[string]any{"spec": map[string]any{"replicas": 2.0}}, want: true},
		{name: "float64 equals float64", stamped: map[string]any{"spec": map[string]any{"ratio": 0.5}}, want: true},
		{name: "different number", stamped: map[string]any{"spec": map[string]any{"replicas": int64(3)}}, want: false},
		{name: "non-integral float is not the int", stamped: map[string]any{"spec": map[string]any{"replicas": 2.5}}, want: false},
		{name: "number is not its string", stamped: map[string]any{"spec": map[string]any{"replicas": "2"}}, want: false},
		{name: "false is held", stamped: map[string]any{"spec": map[string]any{"paused": false}}, want: true},
		{name: "missing key", stamped: map[string]any{"spec": map[string]any{"minReadySeconds": int64(0)}}, want: false},
		{name: "null is held by a missing key", stamped: map[string]any{"spec": map[string]any{"strategy": nil}}, want: true},
		{name: "null is held by a value (apply leaves the field unset)", stamped: map[string]any{"spec": map[string]any{"replicas": nil}}, want: true},
		{name: "different string", stamped: map[string]any{"metadata": map[string]any{"name": "other"}}, want: false},
		{name: "map is not a scalar", stamped: map[string]any{"kind": map[string]any{}}, want: false},
		{
			name: "list length differs",
			stamped: map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{
				map[string]any{"name": "workload"}, map[string]any{"name": "sidecar"},
			}}}}},
			want: false,
		},
		{
			name: "list element differs",
			stamped: map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{
				map[string]any{"name": "workload", "image": "other"},
			}}}}},
			want: false,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := stamp.Contains(live, tt.stamped); got != tt.want {
				t.Errorf("Contains() = %v, want %v", got, tt.want)
			}
		})
	}
}
