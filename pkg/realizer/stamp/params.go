package stamp

import (
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

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
	params := make(map[string]any, len(template))
	fixed := make(map[string]bool, len(template))
	for _, p := range template {
		v, err := decode(&p.Default)
		if err != nil {
			return nil, fmt.Errorf("param %q: template default: %w", p.Name, err)
		}
		params[p.Name] = v
		fixed[p.Name] = false
	}
	layers := []struct {
		what   string
		params []v1alpha1.BlueprintParam
	}{{"blueprint", blueprint}, {"resource", resource}}
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
				return nil, fmt.Errorf("param %q: %s param: %w", p.Name, layer.what, err)
			}
			params[p.Name], fixed[p.Name] = v, isValue
		}
	}
	for _, p := range owner {
		if fixed[p.Name] {
			continue
		}
		v, err := decode(&p.Value)
		if err != nil {
			return nil, fmt.Errorf("param %q: owner param: %w", p.Name, err)
		}
		params[p.Name] = v
	}
	return params, nil
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
