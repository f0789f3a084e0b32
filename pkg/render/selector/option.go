package selector

import (
	"fmt"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// Choice is the template option chosen for an owner: a template to stamp, or an input to forward.
// Exactly one of Template and PassThrough is set.
type Choice struct {
	// Template is the name of the template to stamp.
	Template string
	// PassThrough is the name of the input (a sources, images or configs entry) to forward unchanged.
	PassThrough string
}

// OptionsMatchError means that not exactly one option matched the owner. The caller reports it with
// reason TemplateOptionsMatchError.
type OptionsMatchError struct {
	// Owner names the owner kind, e.g. "workload".
	Owner string
	// Options names every option, in order.
	Options []string
	// Matched names the options that matched equally well at the top score, in order; empty when
	// none matched.
	Matched []string
}

// Error implements error.
func (e *OptionsMatchError) Error() string {
	if len(e.Matched) == 0 {
		return fmt.Sprintf("no option matched the %s among %v", e.Owner, e.Options)
	}
	return fmt.Sprintf("expected exactly 1 option to match, found %v", e.Matched)
}

// OptionSelectorError means an option's selector could not be evaluated, e.g. an invalid jsonpath.
// The caller reports it with reason ResolveTemplateOptionsError.
type OptionSelectorError struct {
	// Option names the option as OptionName does.
	Option string
	// Err names the bad field, e.g. `matchFields[0].key "spec.[": unterminated array`.
	Err error
}

// Error implements error.
func (e *OptionSelectorError) Error() string {
	return fmt.Sprintf("option %q: %v", e.Option, e.Err)
}

// Unwrap returns the selector's error.
func (e *OptionSelectorError) Unwrap() error { return e.Err }

// OptionName is how messages name an option: its template name, or "passThrough=<input>" for an
// option that forwards an input.
func OptionName(o v1alpha1.TemplateOption) string {
	if o.Name != "" {
		return o.Name
	}
	return "passThrough=" + o.PassThrough
}

// ChooseOption returns the option whose selector matches owner with the most satisfied
// requirements (the most specific one). No match, or a tie at the top, is an *OptionsMatchError
// naming the tied options; an option whose selector cannot be evaluated is an
// *OptionSelectorError, since without it nobody can tell which option is the most specific.
// terms.Owner names the owner kind in messages.
func ChooseOption(terms v1alpha1.SelectionTerms, owner Owner, options []v1alpha1.TemplateOption) (Choice, error) {
	var (
		names   = make([]string, 0, len(options))
		best    []string
		highest int
		chosen  v1alpha1.TemplateOption
	)
	for _, o := range options {
		name := OptionName(o)
		names = append(names, name)
		m, err := MatchOption(o.Selector, owner)
		if err != nil {
			return Choice{}, &OptionSelectorError{Option: name, Err: err}
		}
		switch {
		case !m.Matched || m.Score < highest:
		case m.Score > highest:
			highest, best, chosen = m.Score, []string{name}, o
		default:
			best = append(best, name)
		}
	}
	if len(best) != 1 {
		return Choice{}, &OptionsMatchError{Owner: terms.Owner, Options: names, Matched: best}
	}
	return Choice{Template: chosen.Name, PassThrough: chosen.PassThrough}, nil
}
