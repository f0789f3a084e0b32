package selector

import (
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/expr"
)

// Owner is what selectors look at: the owner's labels, and its whole object for field requirements.
type Owner struct {
	// Labels are the owner's labels.
	Labels map[string]string
	// Object is the owner as an unstructured object (metadata, spec, ...), read by matchFields keys.
	Object map[string]any
}

// NewOwner returns the Owner for an unstructured owner object, taking its labels from
// metadata.labels.
func NewOwner(obj map[string]any) Owner {
	u := unstructured.Unstructured{Object: obj}
	return Owner{Labels: u.GetLabels(), Object: obj}
}

// Match is the outcome of matching one selector against an owner.
type Match struct {
	// Matched is true when the selector has at least one requirement and all of them hold.
	Matched bool
	// Score is the number of requirements that hold. For a full match it is the selector's
	// specificity: len(labels) + len(expressions) + len(fields).
	Score int
}

// fieldNames are the JSON names of a selector's three parts, so errors name the user's field.
type fieldNames struct {
	labels, expressions, fields string
}

var (
	blueprintFields = fieldNames{labels: "selector", expressions: "selectorMatchExpressions", fields: "selectorMatchFields"}
	optionFields    = fieldNames{labels: "matchLabels", expressions: "matchExpressions", fields: "matchFields"}
)

// requirements is a selector in either spelling.
type requirements struct {
	names       fieldNames
	labels      map[string]string
	expressions []metav1.LabelSelectorRequirement
	fields      []v1alpha1.FieldSelectorRequirement
}

// MatchBlueprint matches a blueprint's selector (selector, selectorMatchExpressions,
// selectorMatchFields) against owner. An invalid label requirement or jsonpath is an error naming
// the field, e.g. `selectorMatchFields[0].key "spec.[": ...`.
func MatchBlueprint(sel v1alpha1.OwnerSelector, owner Owner) (Match, error) {
	return requirements{
		names:       blueprintFields,
		labels:      sel.Selector,
		expressions: sel.SelectorMatchExpressions,
		fields:      sel.SelectorMatchFields,
	}.match(owner)
}

// MatchOption matches a template option's selector (matchLabels, matchExpressions, matchFields)
// against owner. Errors name the field as MatchBlueprint's do.
func MatchOption(sel v1alpha1.Selector, owner Owner) (Match, error) {
	return requirements{
		names:       optionFields,
		labels:      sel.MatchLabels,
		expressions: sel.MatchExpressions,
		fields:      sel.MatchFields,
	}.match(owner)
}

// match evaluates every requirement, without stopping at the first that fails, so the score counts
// all that hold. The first invalid requirement is the error.
func (r requirements) match(owner Owner) (Match, error) {
	total := len(r.labels) + len(r.expressions) + len(r.fields)
	score := 0
	for key, want := range r.labels {
		if got, ok := owner.Labels[key]; ok && got == want {
			score++
		}
	}
	set := labels.Set(owner.Labels)
	for i, expr := range r.expressions {
		ls, err := metav1.LabelSelectorAsSelector(&metav1.LabelSelector{
			MatchExpressions: []metav1.LabelSelectorRequirement{expr},
		})
		if err != nil {
			return Match{}, fmt.Errorf("%s[%d]: %w", r.names.expressions, i, err)
		}
		if ls.Matches(set) {
			score++
		}
	}
	for i, field := range r.fields {
		ok, err := matchField(field, owner.Object)
		if err != nil {
			return Match{}, fmt.Errorf("%s[%d].%w", r.names.fields, i, err)
		}
		if ok {
			score++
		}
	}
	return Match{Matched: total > 0 && score == total, Score: score}, nil
}

// matchField evaluates one field requirement with expr.MatchField, the rule health rules' matchFields
// share: only non-null values count, In holds when any value's string form (expr.ValueString) is
// listed, NotIn when there is a value and none is, and a key that cannot be read has no value.
// Errors start with the part of the requirement at fault, so the caller can prefix "<field>[i].".
func matchField(req v1alpha1.FieldSelectorRequirement, obj map[string]any) (bool, error) {
	path, err := expr.ParsePath(req.Key)
	if err != nil {
		var syntax *expr.SyntaxError
		if errors.As(err, &syntax) {
			err = syntax.Err
		}
		return false, fmt.Errorf("key %q: %w", req.Key, err)
	}
	values, _ := path.Find(obj)
	ok, _, err := expr.MatchField(req.Operator, req.Values, values)
	if err != nil {
		return false, fmt.Errorf("operator %q: must be one of In, NotIn, Exists, DoesNotExist", req.Operator)
	}
	return ok, nil
}
