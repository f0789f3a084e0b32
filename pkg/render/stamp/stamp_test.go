package stamp_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/surveyor-dev/surveyor/pkg/expr"
	"github.com/surveyor-dev/surveyor/pkg/render/stamp"
)

func owner() map[string]any {
	return map[string]any{
		"apiVersion": "carto.run/v1alpha1",
		"kind":       "Workload",
		"metadata": map[string]any{
			"name":      "petclinic",
			"namespace": "dev",
			"labels":    map[string]any{"app.kubernetes.io/name": "petclinic", "app.tanzu.vmware.com/workload-type": "web"},
		},
		"spec": map[string]any{
			"env":       []any{map[string]any{"name": "PORT", "value": "8080"}},
			"resources": map[string]any{"limits": map[string]any{"memory": "1Gi"}},
			"source":    map[string]any{"git": map[string]any{"url": "https://example.com/petclinic.git"}},
		},
	}
}

func context(inputs stamp.Inputs) map[string]any {
	params := map[string]any{
		"replicas": int64(2),
		"ratio":    0.5,
		"debug":    true,
		"ports":    []any{int64(8080), int64(9090)},
		"nothing":  nil,
	}
	return stamp.NewContext([]string{stamp.OwnerWorkload}, owner(), params, nil, inputs)
}

var oneOfEach = stamp.Inputs{
	Sources: map[string]stamp.Source{"source-provider": {URL: "http://source/petclinic.tar.gz", Revision: "abc123"}},
	Images:  map[string]any{"image-provider": "registry.example.com/petclinic@sha256:1234"},
	Configs: map[string]any{"config-provider": map[string]any{"containers": []any{map[string]any{"name": "workload"}}}},
}

func TestStamp(t *testing.T) {
	tests := []struct {
		name     string
		template string
		inputs   stamp.Inputs
		want     map[string]any
	}{
		{
			name:     "no tags",
			template: `{"kind":"ConfigMap","data":{"a":"b"},"n":3,"f":1.5}`,
			want:     map[string]any{"kind": "ConfigMap", "data": map[string]any{"a": "b"}, "n": int64(3), "f": 1.5},
		},
		{
			name:     "whole-string tags are typed",
			template: `{"s":"$(workload.metadata.name)$","n":"$(params.replicas)$","f":"$(params.ratio)$","b":"$(params.debug)$","l":"$(params.ports)$","m":"$(workload.spec.resources)$","z":"$(params.nothing)$"}`,
			want: map[string]any{
				"s": "petclinic", "n": int64(2), "f": 0.5, "b": true,
				"l": []any{int64(8080), int64(9090)},
				"m": map[string]any{"limits": map[string]any{"memory": "1Gi"}},
				"z": nil,
			},
		},
		{
			name:     "embedded tags are text: expr.ValueString, null as nothing, maps as JSON",
			template: `{"a":"name=$(workload.metadata.name)$","b":"replicas: $(params.replicas)$","c":"x $(workload.spec.resources)$","d":"debug=$(params.debug)$ ratio=$(params.ratio)$","e":"$(params.nothing)$!"}`,
			want: map[string]any{
				"a": "name=petclinic", "b": "replicas: 2", "c": `x {"limits":{"memory":"1Gi"}}`,
				"d": "debug=true ratio=0.5", "e": "!",
			},
		},
		{
			name:     "several and adjacent tags",
			template: `{"a":"$(workload.metadata.namespace)$/$(workload.metadata.name)$","b":"$(workload.metadata.name)$$(params.replicas)$"}`,
			want:     map[string]any{"a": "dev/petclinic", "b": "petclinic2"},
		},
		{
			name:     "paths: index, quoted key, filter, wildcard, spaces",
			template: `{"a":"$(workload.spec.env[0].value)$","b":"$(workload.metadata.labels['app.kubernetes.io/name'])$","c":"$(workload.spec.env[?(@.name=='PORT')].value)$","d":"$(workload.spec.env[*].name)$","e":"$( workload.metadata.name )$","f":"$(.workload.metadata.name)$"}`,
			want:     map[string]any{"a": "8080", "b": "petclinic", "c": "8080", "d": "PORT", "e": "petclinic", "f": "petclinic"},
		},
		{
			name:     "nested maps and lists",
			template: `{"spec":{"template":{"spec":{"containers":[{"name":"workload","image":"$(image)$","env":"$(workload.spec.env)$","args":["--replicas","$(params.replicas)$"]}]}}}}`,
			inputs:   oneOfEach,
			want: map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{
				"name":  "workload",
				"image": "registry.example.com/petclinic@sha256:1234",
				"env":   []any{map[string]any{"name": "PORT", "value": "8080"}},
				"args":  []any{"--replicas", int64(2)},
			}}}}}},
		},
		{
			name:     "map keys are not interpolated",
			template: `{"data":{"$(workload.metadata.name)$":"$(workload.metadata.name)$"}}`,
			want:     map[string]any{"data": map[string]any{"$(workload.metadata.name)$": "petclinic"}},
		},
		{
			name:     "an unterminated tag stays as written",
			template: `{"script":"echo $(date) and $(params.replicas)"}`,
			want:     map[string]any{"script": "echo $(date) and $(params.replicas)"},
		},
		{
			name:     "singular shortcuts with exactly one input of a kind",
			template: `{"url":"$(source.url)$","rev":"$(source.revision)$","image":"$(image)$","config":"$(config)$"}`,
			inputs:   oneOfEach,
			want: map[string]any{
				"url": "http://source/petclinic.tar.gz", "rev": "abc123",
				"image":  "registry.example.com/petclinic@sha256:1234",
				"config": map[string]any{"containers": []any{map[string]any{"name": "workload"}}},
			},
		},
		{
			name:     "inputs by name",
			template: `{"url":"$(sources.source-provider.url)$","image":"$(images.image-provider.image)$","config":"$(configs['config-provider'].config.containers[0].name)$"}`,
			inputs:   oneOfEach,
			want:     map[string]any{"url": "http://source/petclinic.tar.gz", "image": "registry.example.com/petclinic@sha256:1234", "config": "workload"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := stamp.Stamp([]byte(tt.template), context(tt.inputs))
			if err != nil {
				t.Fatalf("Stamp() error = %v", err)
			}
			if !reflect.DeepEqual(got.Object, tt.want) {
				t.Errorf("Stamp() = %#v\nwant %#v", got.Object, tt.want)
			}
			// DeepCopy panics on any type an unstructured object may not hold.
			if copied := got.DeepCopy(); !reflect.DeepEqual(copied.Object, got.Object) {
				t.Errorf("DeepCopy() changed the object")
			}
		})
	}
}

func TestStampErrors(t *testing.T) {
	twoSources := stamp.Inputs{Sources: map[string]stamp.Source{"a": {URL: "u1"}, "b": {URL: "u2"}}}
	tests := []struct {
		name     string
		template string
		inputs   stamp.Inputs
		wantErr  string
		tag      string
		notFound bool
		syntax   bool
	}{
		{
			name:     "missing path names tag and location",
			template: `{"spec":{"template":{"spec":{"containers":[{"name":"workload","image":"$(workload.spec.image)$"}]}}}}`,
			wantErr:  "jsonpath [workload.spec.image] at .spec.template.spec.containers[0].image: image is not found",
			tag:      "workload.spec.image", notFound: true,
		},
		{
			name:     "missing path embedded in text",
			template: `{"data":{"x":"image is $(workload.spec.image)$"}}`,
			wantErr:  "jsonpath [workload.spec.image] at .data.x: image is not found",
			tag:      "workload.spec.image", notFound: true,
		},
		{
			name:     "keys that are not identifiers are quoted",
			template: `{"metadata":{"annotations":{"example.com/x":"$(params.missing)$"}}}`,
			wantErr:  "jsonpath [params.missing] at .metadata.annotations['example.com/x']: missing is not found",
			tag:      "params.missing", notFound: true,
		},
		{
			name:     "index out of range",
			template: `{"a":"$(workload.spec.env[3].value)$"}`,
			wantErr:  "jsonpath [workload.spec.env[3].value] at .a: array index out of bounds: index 3, length 1",
			tag:      "workload.spec.env[3].value", notFound: true,
		},
		{
			name:     "no singular source with two sources",
			template: `{"a":"$(source.url)$"}`,
			inputs:   twoSources,
			wantErr:  "jsonpath [source.url] at .a: source is not found",
			tag:      "source.url", notFound: true,
		},
		{
			name:     "no singular image without images",
			template: `{"a":"$(image)$"}`,
			wantErr:  "jsonpath [image] at .a: image is not found",
			tag:      "image", notFound: true,
		},
		{
			name:     "invalid jsonpath",
			template: `{"data":{"x":"$(workload.spec.[)$"}}`,
			wantErr:  "invalid jsonpath [workload.spec.[] at .data.x: unterminated array",
			tag:      "workload.spec.[", syntax: true,
		},
		{
			name:     "empty tag",
			template: `{"data":{"x":"$()$"}}`,
			wantErr:  "invalid jsonpath [] at .data.x: empty path",
			syntax:   true,
		},
		{
			name:     "the first failing location is reported",
			template: `{"z":"$(params.z)$","b":["ok","$(params.b)$"],"a":{"y":"$(params.a)$"}}`,
			wantErr:  "jsonpath [params.a] at .a.y: a is not found",
			tag:      "params.a", notFound: true,
		},
		{
			name:     "not an object",
			template: `["a"]`,
			wantErr:  "template must be a JSON object",
		},
		{
			name:     "not JSON",
			template: `{"a":`,
			wantErr:  "decoding template: unexpected end of JSON input",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := stamp.Stamp([]byte(tt.template), context(tt.inputs))
			var stampErr *stamp.Error
			if !errors.As(err, &stampErr) {
				t.Fatalf("Stamp() error = %v, want a *stamp.Error", err)
			}
			if err.Error() != tt.wantErr {
				t.Errorf("Stamp() error = %q, want %q", err, tt.wantErr)
			}
			if stampErr.Tag != tt.tag {
				t.Errorf("Error.Tag = %q, want %q", stampErr.Tag, tt.tag)
			}
			if got := errors.Is(err, expr.ErrNotFound); got != tt.notFound {
				t.Errorf("errors.Is(ErrNotFound) = %v, want %v", got, tt.notFound)
			}
			var syntax *expr.SyntaxError
			if got := errors.As(err, &syntax); got != tt.syntax {
				t.Errorf("errors.As(*SyntaxError) = %v, want %v", got, tt.syntax)
			}
		})
	}
}

// The stamped object must not share maps with the context: the reconciler mutates it (namespace,
// labels, owner references) and the context holds the owner from the informer cache.
func TestStampDoesNotAliasContext(t *testing.T) {
	ctx := context(oneOfEach)
	got, err := stamp.Stamp([]byte(`{"m":"$(workload.spec.resources)$","c":"$(config)$"}`), ctx)
	if err != nil {
		t.Fatal(err)
	}
	got.Object["m"].(map[string]any)["limits"].(map[string]any)["memory"] = "2Gi"
	got.Object["c"].(map[string]any)["containers"].([]any)[0] = "changed"
	if mem := ctx["workload"].(map[string]any)["spec"].(map[string]any)["resources"].(map[string]any)["limits"].(map[string]any)["memory"]; mem != "1Gi" {
		t.Errorf("owner changed through the stamped object: memory = %v", mem)
	}
	if c := ctx["config"].(map[string]any)["containers"].([]any)[0]; !reflect.DeepEqual(c, map[string]any{"name": "workload"}) {
		t.Errorf("config changed through the stamped object: %v", c)
	}
}

// Values that are not unstructured types, e.g. int from a hand-built owner, are normalized.
func TestStampNormalizesNumbers(t *testing.T) {
	ctx := stamp.NewContext([]string{stamp.OwnerWorkload}, map[string]any{"spec": map[string]any{"n": 3, "f": float32(0.5), "l": []any{int32(1)}}}, nil, nil, stamp.Inputs{})
	got, err := stamp.Stamp([]byte(`{"n":"$(workload.spec.n)$","f":"$(workload.spec.f)$","l":"$(workload.spec.l)$"}`), ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"n": int64(3), "f": 0.5, "l": []any{int64(1)}}
	if !reflect.DeepEqual(got.Object, want) {
		t.Errorf("Stamp() = %#v, want %#v", got.Object, want)
	}
	got.DeepCopy()
}

// TestNewContext pins the context, which is also a ytt template's data values (one per
// top-level key), to what Cartographer passes (its reference, A4).
func TestNewContext(t *testing.T) {
	owner := map[string]any{"kind": "Workload", "spec": map[string]any{"params": []any{map[string]any{"name": "n", "value": "5"}}}}
	labels := map[string]string{"carto.run/workload-name": "app", "carto.run/resource-name": "r"}
	base := func(extra map[string]any) map[string]any {
		m := map[string]any{
			"workload": owner, "deliverable": owner, "params": map[string]any{},
			"sources": map[string]any{}, "images": map[string]any{}, "configs": map[string]any{},
			"deployment": nil,
			"labels":     map[string]any{"carto.run/workload-name": "app", "carto.run/resource-name": "r"},
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	tests := []struct {
		name   string
		params map[string]any
		inputs stamp.Inputs
		want   map[string]any
	}{
		{
			name: "no inputs: empty maps, null deployment, no singulars",
			want: base(nil),
		},
		{
			name:   "params keep their types: the string \"5\" stays a string",
			params: map[string]any{"s": "5", "i": int64(5), "f": 0.5, "b": true, "m": map[string]any{"k": "v"}, "l": []any{"a"}, "z": nil},
			want: base(map[string]any{"params": map[string]any{
				"s": "5", "i": int64(5), "f": 0.5, "b": true, "m": map[string]any{"k": "v"}, "l": []any{"a"}, "z": nil,
			}}),
		},
		{
			name: "one of each kind adds the singulars",
			inputs: stamp.Inputs{
				Sources: map[string]stamp.Source{"s": {URL: "u", Revision: "r"}},
				Images:  map[string]any{"i": "img"},
				Configs: map[string]any{"c": map[string]any{"k": "v"}},
			},
			want: base(map[string]any{
				"sources": map[string]any{"s": map[string]any{"url": "u", "revision": "r", "name": "s"}},
				"images":  map[string]any{"i": map[string]any{"image": "img", "name": "i"}},
				"configs": map[string]any{"c": map[string]any{"config": map[string]any{"k": "v"}, "name": "c"}},
				"source":  map[string]any{"url": "u", "revision": "r", "name": "s"},
				"image":   "img",
				"config":  map[string]any{"k": "v"},
			}),
		},
		{
			name: "two of a kind have no singular",
			inputs: stamp.Inputs{
				Sources: map[string]stamp.Source{"a": {URL: "1"}, "b": {URL: "2"}},
				Images:  map[string]any{"a": "1", "b": "2"},
				Configs: map[string]any{"a": "1", "b": "2"},
			},
			want: base(map[string]any{
				"sources": map[string]any{"a": map[string]any{"url": "1", "revision": nil, "name": "a"}, "b": map[string]any{"url": "2", "revision": nil, "name": "b"}},
				"images":  map[string]any{"a": map[string]any{"image": "1", "name": "a"}, "b": map[string]any{"image": "2", "name": "b"}},
				"configs": map[string]any{"a": map[string]any{"config": "1", "name": "a"}, "b": map[string]any{"config": "2", "name": "b"}},
			}),
		},
		{
			name:   "a deployment has an empty name",
			inputs: stamp.Inputs{Deployment: &stamp.Source{URL: "u", Revision: "r"}},
			want:   base(map[string]any{"deployment": map[string]any{"url": "u", "revision": "r", "name": ""}}),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := stamp.NewContext([]string{stamp.OwnerWorkload, stamp.OwnerDeliverable}, owner, tt.params, labels, tt.inputs)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("NewContext() = %#v\nwant %#v", got, tt.want)
			}
		})
	}
}
