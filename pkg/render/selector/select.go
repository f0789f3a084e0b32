package selector

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// Candidate is a blueprint that may select the owner.
type Candidate struct {
	// Name is the blueprint's name.
	Name string
	// Selector is the blueprint's selector.
	Selector v1alpha1.OwnerSelector
}

// Selection is the outcome of Select.
type Selection struct {
	// Name is the chosen blueprint, or empty when none was chosen.
	Name string
	// Reason is v1alpha1.ReasonReady when a blueprint was chosen, otherwise one of the v1alpha1.SelectionTerms'
	// reasons, for the owner's SupplyChainReady (DeliveryReady) condition.
	Reason string
	// Message explains Reason in Cartographer's words; empty when a blueprint was chosen.
	Message string
	// Errors are the candidates skipped because their selector could not be evaluated, each a
	// *CandidateError, sorted by candidate name. They do not stop the others from being chosen.
	Errors []error
}

// CandidateError is a candidate whose selector could not be evaluated, e.g. an invalid jsonpath.
type CandidateError struct {
	// Name is the candidate's name.
	Name string
	// Err names the bad field, e.g. `selectorMatchFields[0].key "spec.[": unterminated array`.
	Err error
}

// Error implements error.
func (e *CandidateError) Error() string { return fmt.Sprintf("%q: %v", e.Name, e.Err) }

// Unwrap returns the selector's error.
func (e *CandidateError) Unwrap() error { return e.Err }

// Select chooses the blueprint whose selector the owner fully satisfies with the highest score
// (DESIGN §3.1). An owner without labels is reported as such without looking at the candidates, as
// Cartographer does. A tie at the top score selects nothing and names the tied blueprints.
func Select(terms v1alpha1.SelectionTerms, owner Owner, candidates []Candidate) Selection {
	if len(owner.Labels) == 0 {
		return Selection{
			Reason:  terms.LabelsMissing,
			Message: fmt.Sprintf("%s has no labels to match to %s", terms.Owner, terms.Blueprint),
		}
	}
	var (
		best    []string
		highest int
		errs    []error
	)
	for _, c := range candidates {
		m, err := MatchBlueprint(c.Selector, owner)
		if err != nil {
			errs = append(errs, &CandidateError{Name: c.Name, Err: err})
			continue
		}
		switch {
		case !m.Matched || m.Score < highest:
		case m.Score > highest:
			highest, best = m.Score, []string{c.Name}
		default:
			best = append(best, c.Name)
		}
	}
	slices.SortFunc(errs, func(a, b error) int {
		return cmp.Compare(a.(*CandidateError).Name, b.(*CandidateError).Name)
	})
	slices.Sort(best)
	switch len(best) {
	case 0:
		// fmt prints a map's keys sorted, which keeps the message stable across reconciles.
		return Selection{
			Reason:  terms.NotFound,
			Message: fmt.Sprintf("no %s found where full selector is satisfied by labels: %v", terms.Blueprint, owner.Labels),
			Errors:  errs,
		}
	case 1:
		return Selection{Name: best[0], Reason: v1alpha1.ReasonReady, Errors: errs}
	default:
		return Selection{
			Reason:  terms.MultipleMatches,
			Message: fmt.Sprintf("%s may only match a single %s's selector", terms.Owner, terms.Blueprint),
			Errors:  errs,
		}
	}
}
