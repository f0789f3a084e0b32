package view

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// ListOptions say how PrintList lays out its table.
type ListOptions struct {
	Options
	// AllNamespaces adds the NAMESPACE column.
	AllNamespaces bool
}

// columns are the optional columns of the owner table.
type columns struct {
	// rollout is the owner's place in its blueprint's rollout.
	rollout bool
	// complete is the owner's Complete condition.
	complete bool
}

// PrintList prints a table of owners of one kind, a row each: name, blueprint, generation,
// Ready (with the generation it speaks about when that is not the current one), Available
// (with its last good generation), how many resources are Ready, the rollout state and
// Complete when some owner has them, the reason it is not Ready, and its age.
func PrintList(w io.Writer, kind string, owners []Owner, opts ListOptions) error {
	return (&ListPrinter{Kind: kind, Options: opts}).Print(w, owners)
}

// ListPrinter prints the table of PrintList in parts, for rows that come one by one (get
// --watch): the header and the optional columns are those of the first part, and later
// rows keep its column widths.
type ListPrinter struct {
	Kind    string
	Options ListOptions
	cols    *columns
	widths  []int
}

// Print prints owners' rows, under the header the first time.
func (p *ListPrinter) Print(w io.Writer, owners []Owner) error {
	t := table{widths: p.widths}
	if p.cols == nil {
		p.cols = &columns{}
		for _, o := range owners {
			p.cols.rollout = p.cols.rollout || o.Status.Rollout != nil
			p.cols.complete = p.cols.complete || o.Condition(v1alpha1.ConditionComplete) != nil
		}
		t.plainRow(p.header()...)
	}
	for _, o := range owners {
		t.row(p.row(o)...)
	}
	err := t.write(w, p.Options.Color)
	p.widths = t.widths
	return err
}

func (p *ListPrinter) header() []string {
	blueprint := "SUPPLYCHAIN"
	if k := v1alpha1.OwnerKindNamed(p.Kind); k != nil {
		blueprint = strings.ToUpper(strings.ReplaceAll(k.Terms.Blueprint, " ", ""))
	}
	var header []string
	if p.Options.AllNamespaces {
		header = append(header, "NAMESPACE")
	}
	header = append(header, "NAME", blueprint, "GEN", "READY", "AVAILABLE", "RESOURCES")
	if p.cols.rollout {
		header = append(header, "ROLLOUT")
	}
	if p.cols.complete {
		header = append(header, "COMPLETE")
	}
	return append(header, "REASON", "AGE")
}

func (p *ListPrinter) row(o Owner) []text {
	var row []text
	if p.Options.AllNamespaces {
		row = append(row, plain(o.Namespace))
	}
	blueprint := "-"
	if o.Blueprint != nil {
		blueprint = o.Blueprint.Name
	}
	row = append(row, plain(o.Name), plain(blueprint), plain(strconv.FormatInt(o.Generation, 10)),
		o.AtGeneration(o.Condition(v1alpha1.ConditionReady)), o.AtGeneration(o.Condition(v1alpha1.ConditionAvailable)),
		plain(ResourceCount(o)))
	if p.cols.rollout {
		row = append(row, plain(RolloutState(o.Status.Rollout)))
	}
	if p.cols.complete {
		row = append(row, ConditionStatus(o.Condition(v1alpha1.ConditionComplete)))
	}
	return append(row, plain(o.Reason()), plain(p.Options.Age(o.Created)))
}

// Reason is why the owner is not Ready, in a word: its Ready condition's reason,
// NotObserved when the status lags the spec, or "" when it is Ready.
func (o Owner) Reason() string {
	return notReadyReason(o.Observed(), o.Condition(v1alpha1.ConditionReady))
}

// notReadyReason is why an object whose Ready condition is ready is not Ready, in a word:
// NotObserved when its status lags its spec (observed false), Ready's reason, or "" when
// it is Ready.
func notReadyReason(observed bool, ready *metav1.Condition) string {
	if !observed {
		return reasonNotObserved
	}
	if ready != nil && ready.Status != metav1.ConditionTrue {
		return ready.Reason
	}
	return ""
}

// AtGeneration is a condition's status, followed by the generation it speaks about when
// that is not the owner's current one: "True", "True (gen 3)", or "-" when it is missing.
func (o Owner) AtGeneration(c *metav1.Condition) []Span {
	if c != nil && c.Type == v1alpha1.ConditionAvailable && c.Status != metav1.ConditionTrue {
		return statusText(c.Status) // no generation was good: none to name
	}
	return atGeneration(c, o.Generation)
}

// atGeneration is a condition's status, followed by the generation it speaks about when
// that is not generation, or "-" when it is missing.
func atGeneration(c *metav1.Condition, generation int64) text {
	if c == nil {
		return plain("-")
	}
	t := statusText(c.Status)
	if c.ObservedGeneration != generation {
		t = join(t, plain(fmt.Sprintf("(gen %d)", c.ObservedGeneration)))
	}
	return t
}

// ConditionStatus is a condition's status, marked as one, or "-" when it is missing.
func ConditionStatus(c *metav1.Condition) []Span {
	if c == nil {
		return plain("-")
	}
	return statusText(c.Status)
}

// ResourceCount is "ready/total" over the owner's resources, or "-" without any.
func ResourceCount(o Owner) string {
	if len(o.Status.Resources) == 0 {
		return "-"
	}
	ready := 0
	for _, r := range o.Status.Resources {
		if status(readyOf(r)) == metav1.ConditionTrue {
			ready++
		}
	}
	return fmt.Sprintf("%d/%d", ready, len(o.Status.Resources))
}

// RolloutState is the owner's rollout state and group, or "-".
func RolloutState(r *v1alpha1.OwnerRolloutStatus) string {
	switch {
	case r == nil:
		return "-"
	case r.Group != "":
		return string(r.State) + " (" + r.Group + ")"
	}
	return string(r.State)
}
