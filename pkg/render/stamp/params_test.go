package stamp_test

import (
	"reflect"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/render/stamp"
)

func raw(s string) *apiextensionsv1.JSON { return &apiextensionsv1.JSON{Raw: []byte(s)} }

func tparam(name, def string) v1alpha1.TemplateParam {
	return v1alpha1.TemplateParam{Name: name, Default: *raw(def)}
}

func value(name, v string) v1alpha1.BlueprintParam {
	return v1alpha1.BlueprintParam{Name: name, Value: raw(v)}
}

func deflt(name, v string) v1alpha1.BlueprintParam {
	return v1alpha1.BlueprintParam{Name: name, Default: raw(v)}
}

func oparam(name, v string) v1alpha1.OwnerParam {
	return v1alpha1.OwnerParam{Name: name, Value: *raw(v)}
}

func TestParams(t *testing.T) {
	tmpl := []v1alpha1.TemplateParam{tparam("p", `"template"`)}
	tests := []struct {
		name      string
		template  []v1alpha1.TemplateParam
		blueprint []v1alpha1.BlueprintParam
		resource  []v1alpha1.BlueprintParam
		owner     []v1alpha1.OwnerParam
		want      map[string]any
		wantErr   string
	}{
		{name: "template default", template: tmpl, want: map[string]any{"p": "template"}},
		{name: "no params", want: map[string]any{}},
		{name: "supply-chain default beats template", template: tmpl, blueprint: []v1alpha1.BlueprintParam{deflt("p", `"chain"`)}, want: map[string]any{"p": "chain"}},
		{name: "supply-chain value beats template", template: tmpl, blueprint: []v1alpha1.BlueprintParam{value("p", `"chain"`)}, want: map[string]any{"p": "chain"}},
		{
			name: "resource default beats supply-chain default", template: tmpl,
			blueprint: []v1alpha1.BlueprintParam{deflt("p", `"chain"`)}, resource: []v1alpha1.BlueprintParam{deflt("p", `"resource"`)},
			want: map[string]any{"p": "resource"},
		},
		{
			name: "resource value beats supply-chain value", template: tmpl,
			blueprint: []v1alpha1.BlueprintParam{value("p", `"chain"`)}, resource: []v1alpha1.BlueprintParam{value("p", `"resource"`)},
			want: map[string]any{"p": "resource"},
		},
		{
			name: "resource default beats supply-chain value", template: tmpl,
			blueprint: []v1alpha1.BlueprintParam{value("p", `"chain"`)}, resource: []v1alpha1.BlueprintParam{deflt("p", `"resource"`)},
			want: map[string]any{"p": "resource"},
		},
		{name: "owner beats template default", template: tmpl, owner: []v1alpha1.OwnerParam{oparam("p", `"owner"`)}, want: map[string]any{"p": "owner"}},
		{
			name: "owner beats supply-chain default", template: tmpl,
			blueprint: []v1alpha1.BlueprintParam{deflt("p", `"chain"`)}, owner: []v1alpha1.OwnerParam{oparam("p", `"owner"`)},
			want: map[string]any{"p": "owner"},
		},
		{
			name: "owner cannot override supply-chain value", template: tmpl,
			blueprint: []v1alpha1.BlueprintParam{value("p", `"chain"`)}, owner: []v1alpha1.OwnerParam{oparam("p", `"owner"`)},
			want: map[string]any{"p": "chain"},
		},
		{
			name: "owner beats resource default", template: tmpl,
			resource: []v1alpha1.BlueprintParam{deflt("p", `"resource"`)}, owner: []v1alpha1.OwnerParam{oparam("p", `"owner"`)},
			want: map[string]any{"p": "owner"},
		},
		{
			name: "owner cannot override resource value", template: tmpl,
			resource: []v1alpha1.BlueprintParam{value("p", `"resource"`)}, owner: []v1alpha1.OwnerParam{oparam("p", `"owner"`)},
			want: map[string]any{"p": "resource"},
		},
		{
			name: "resource default re-opens a supply-chain value to the owner", template: tmpl,
			blueprint: []v1alpha1.BlueprintParam{value("p", `"chain"`)}, resource: []v1alpha1.BlueprintParam{deflt("p", `"resource"`)},
			owner: []v1alpha1.OwnerParam{oparam("p", `"owner"`)},
			want:  map[string]any{"p": "owner"},
		},
		{
			name: "resource value closes a supply-chain default to the owner", template: tmpl,
			blueprint: []v1alpha1.BlueprintParam{deflt("p", `"chain"`)}, resource: []v1alpha1.BlueprintParam{value("p", `"resource"`)},
			owner: []v1alpha1.OwnerParam{oparam("p", `"owner"`)},
			want:  map[string]any{"p": "resource"},
		},
		{
			name: "every layer: owner wins over defaults", template: tmpl,
			blueprint: []v1alpha1.BlueprintParam{deflt("p", `"chain"`)}, resource: []v1alpha1.BlueprintParam{deflt("p", `"resource"`)},
			owner: []v1alpha1.OwnerParam{oparam("p", `"owner"`)},
			want:  map[string]any{"p": "owner"},
		},
		{
			name: "undeclared params reach the template, with the same precedence", template: tmpl,
			blueprint: []v1alpha1.BlueprintParam{value("q", `1`), deflt("t", `"blueprint"`)},
			resource:  []v1alpha1.BlueprintParam{deflt("r", `2`)},
			owner:     []v1alpha1.OwnerParam{oparam("s", `3`), oparam("q", `9`), oparam("t", `"owner"`)},
			want:      map[string]any{"p": "template", "q": int64(1), "r": int64(2), "s": int64(3), "t": "owner"},
		},
		{
			name:     "values are decoded JSON with int64 integers",
			template: []v1alpha1.TemplateParam{tparam("n", `3`), tparam("f", `1.5`), tparam("b", `true`), tparam("m", `{"a":[1,"x"]}`), tparam("z", `null`)},
			owner:    []v1alpha1.OwnerParam{oparam("f", `2.5`)},
			want:     map[string]any{"n": int64(3), "f": 2.5, "b": true, "m": map[string]any{"a": []any{int64(1), "x"}}, "z": nil},
		},
		{
			name:     "invalid JSON names the param",
			template: []v1alpha1.TemplateParam{tparam("n", `{`)},
			wantErr:  `param "n": template default: decoding {: unexpected end of JSON input`,
		},
		{
			name: "invalid owner JSON names the param", template: tmpl,
			owner:   []v1alpha1.OwnerParam{oparam("p", `[`)},
			wantErr: `param "p": owner param: decoding [: unexpected end of JSON input`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := stamp.Params(tt.template, tt.blueprint, tt.resource, tt.owner)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("Params() error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Params() error = %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Params() = %#v, want %#v", got, tt.want)
			}
		})
	}
}

func TestResolveParamsOrigins(t *testing.T) {
	got, err := stamp.ResolveParams(
		[]v1alpha1.TemplateParam{tparam("a", `1`), tparam("b", `2`), tparam("c", `3`), tparam("d", `4`)},
		[]v1alpha1.BlueprintParam{deflt("b", `20`), value("c", `30`)},
		[]v1alpha1.BlueprintParam{value("d", `40`)},
		[]v1alpha1.OwnerParam{oparam("b", `200`), oparam("c", `300`), oparam("e", `500`)},
	)
	if err != nil {
		t.Fatal(err)
	}
	want := []stamp.Param{
		{Name: "a", Value: int64(1), From: stamp.FromTemplate},
		{Name: "b", Value: int64(200), From: stamp.FromOwner},
		{Name: "c", Value: int64(30), From: stamp.FromBlueprint, Fixed: true},
		{Name: "d", Value: int64(40), From: stamp.FromResource, Fixed: true},
		{Name: "e", Value: int64(500), From: stamp.FromOwner},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ResolveParams = %+v, want %+v", got, want)
	}
}
