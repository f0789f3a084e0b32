package rollout

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// rules is a RolloutStrategy read once per decision: selectors parsed, durations resolved.
type rules struct {
	v1alpha1.RolloutStrategy
	// selectors are parallel to Groups; nil where the selector is invalid (it selects no owner).
	selectors []labels.Selector
	// mandatory are the mandatory groups that are groups, in mandatoryGroups order.
	mandatory []string
	// problems are said in the RolloutProgressing message.
	problems   []string
	minSuccess time.Duration
	deadline   time.Duration // 0: none
}

func readRules(s v1alpha1.RolloutStrategy) rules {
	r := rules{RolloutStrategy: s, selectors: make([]labels.Selector, len(s.Groups))}
	known := map[string]bool{}
	for i, g := range s.Groups {
		known[g.Name] = true
		sel, err := metav1.LabelSelectorAsSelector(&g.Selector)
		if err != nil {
			r.problems = append(r.problems, fmt.Sprintf("group %s selects no owner: invalid selector: %v", g.Name, err))
			continue
		}
		r.selectors[i] = sel
	}
	for _, name := range s.MandatoryGroups {
		if known[name] {
			r.mandatory = append(r.mandatory, name)
		}
	}
	if s.MinSuccessTime != nil && s.MinSuccessTime.Duration > 0 {
		r.minSuccess = s.MinSuccessTime.Duration
	}
	r.deadline = s.ProgressDeadline.Duration()
	return r
}

// groupOf is the first group, in spec order, whose selector matches; "" when none does.
func (r *rules) groupOf(lbls map[string]string) string {
	for i, sel := range r.selectors {
		if sel != nil && sel.Matches(labels.Set(lbls)) {
			return r.Groups[i].Name
		}
	}
	return ""
}

// isGroup reports whether name is a group of the strategy, "" (no group) included.
func (r *rules) isGroup(name string) bool {
	if name == "" {
		return true
	}
	for _, g := range r.Groups {
		if g.Name == name {
			return true
		}
	}
	return false
}

func (r *rules) isMandatory(name string) bool {
	for _, m := range r.mandatory {
		if m == name {
			return true
		}
	}
	return false
}

// scale resolves an integer or a percentage against n owners: a percentage is the ceiling of p × n,
// an integer above n is n (the whole group, never zero), and an unset or unreadable value is def.
// The CRD schema rejects unreadable values, so def only ever stands in for an unset one in practice.
func scale(v *intstr.IntOrString, n, def int) int {
	if v == nil {
		return def
	}
	k, err := intstr.GetScaledValueFromIntOrPercent(v, n, true)
	if err != nil || k < 0 {
		return def
	}
	return min(k, n)
}

// maxConcurrency is how many of n owners may be in flight at once: all of them by default, and
// at least one.
func (r *rules) maxConcurrency(n int) int {
	return max(scale(r.MaxConcurrency, n, n), 1)
}
