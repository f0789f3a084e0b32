package stamp

import (
	"fmt"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// The layers a param can come from, lowest precedence first, as Param.From names them.
const (
	// FromTemplate is a template's default.
	FromTemplate = "template default"
	// FromBlueprint is the blueprint's (supply chain's or delivery's) params.
	FromBlueprint = "blueprint"
	// FromResource is the blueprint resource's params.
	FromResource = "resource"
	// FromOwner is the owner's (Workload's or Deliverable's) params.
	FromOwner = "owner"
)

// Param is one param a template sees, and where its value came from.
type Param struct {
	// Name is the param's name.
	Name string
	// Value is the decoded JSON value.
	Value any
	// From is the layer that set Value: FromTemplate, FromBlueprint, FromResource or FromOwner.
	From string
	// Fixed is set when a blueprint or resource gave the param as a value, which the owner cannot
	// override.
	Fixed bool
}

// Params returns the params a template sees, as decoded JSON values keyed by name (DESIGN §3.2).
//
// Each param starts at the template's default and is overridden, in turn, by the blueprint's
// param, the resource's param and the owner's param. A param the template does not declare still
// exists when any of them gives it, as in Cartographer, where templates rely on it. The last blueprint or resource layer that sets a param
// decides whether the owner may override it: a value is fixed, a default is not. So a resource
// default re-opens a param the supply chain fixed, and a resource value fixes one the supply chain
// left open.
func Params(
	template []v1alpha1.TemplateParam,
	blueprint, resource []v1alpha1.BlueprintParam,
	owner []v1alpha1.OwnerParam,
) (map[string]any, error) {
	resolved, err := ResolveParams(template, blueprint, resource, owner)
	if err != nil {
		return nil, err
	}
	params := make(map[string]any, len(resolved))
	for _, p := range resolved {
		params[p.Name] = p.Value
	}
	return params, nil
}

// ResolveParams is Params with each param's origin, sorted by name, for telling a user why a
// param has its value.
func ResolveParams(
	template []v1alpha1.TemplateParam,
	blueprint, resource []v1alpha1.BlueprintParam,
	owner []v1alpha1.OwnerParam,
) ([]Param, error) {
	params := make(map[string]*Param, len(template))
	for _, p := range template {
		v, err := decode(&p.Default)
		if err != nil {
			return nil, fmt.Errorf("param %q: template default: %w", p.Name, err)
		}
		params[p.Name] = &Param{Name: p.Name, Value: v, From: FromTemplate}
	}
	layers := []struct {
		from   string
		params []v1alpha1.BlueprintParam
	}{{FromBlueprint, blueprint}, {FromResource, resource}}
	for _, layer := range layers {
		for _, p := range layer.params {
			given, isValue := p.Default, false
			if p.Value != nil {
				given, isValue = p.Value, true
			}
			if given == nil {
				continue
			}
			v, err := decode(given)
			if err != nil {
				return nil, fmt.Errorf("param %q: %s param: %w", p.Name, layer.from, err)
			}
			params[p.Name] = &Param{Name: p.Name, Value: v, From: layer.from, Fixed: isValue}
		}
	}
	for _, p := range owner {
		if prev, ok := params[p.Name]; ok && prev.Fixed {
			continue
		}
		v, err := decode(&p.Value)
		if err != nil {
			return nil, fmt.Errorf("param %q: %s param: %w", p.Name, FromOwner, err)
		}
		params[p.Name] = &Param{Name: p.Name, Value: v, From: FromOwner}
	}
	out := make([]Param, 0, len(params))
	for _, p := range params {
		out = append(out, *p)
	}
	slices.SortFunc(out, func(a, b Param) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// decode turns a raw JSON value into the types unstructured objects hold (int64, not float64, for
// integers). An absent value is null.
func decode(j *apiextensionsv1.JSON) (any, error) {
	if j == nil || len(j.Raw) == 0 {
		return nil, nil
	}
	var v any
	if err := utiljson.Unmarshal(j.Raw, &v); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", j.Raw, err)
	}
	return v, nil
}
