package view

import (
	"fmt"
	"io"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// ListOptions say how PrintList lays out its table.
type ListOptions struct {
	Options
	// AllNamespaces adds the NAMESPACE column.
	AllNamespaces bool
	// NoHeaders leaves the header row out (for rows printed one by one while watching).
	NoHeaders bool
	// Columns are the optional columns to print; nil chooses them from the owners (see
	// ListColumns), so that rows printed later under one header can keep its columns.
	Columns *Columns
}

// Columns are the optional columns of the owner table.
type Columns struct {
	// Rollout is the owner's place in its blueprint's rollout.
	Rollout bool
	// Complete is the owner's Complete condition.
	Complete bool
}

// ListColumns are the optional columns some of the owners need.
func ListColumns(owners []Owner) Columns {
	var c Columns
	for _, o := range owners {
		c.Rollout = c.Rollout || o.Status.Rollout != nil
		c.Complete = c.Complete || o.Condition(v1alpha1.ConditionComplete) != nil
	}
	return c
}

// PrintList prints a table of owners of one kind, a row each: name, blueprint, generation,
// Ready (with the generation it speaks about when that is not the current one), Available
// (with its last good generation), how many resources are Ready, the rollout state and
// Complete when some owner has them, the reason it is not Ready, and its age.
func PrintList(w io.Writer, kind string, owners []Owner, opts ListOptions) error {
	cols := ListColumns(owners)
	if opts.Columns != nil {
		cols = *opts.Columns
	}
	var t table
	if !opts.NoHeaders {
		blueprint := "SUPPLYCHAIN"
		if kind == v1alpha1.KindDeliverable {
			blueprint = "DELIVERY"
		}
		var header []string
		if opts.AllNamespaces {
			header = append(header, "NAMESPACE")
		}
		header = append(header, "NAME", blueprint, "GEN", "READY", "AVAILABLE", "RESOURCES")
		if cols.Rollout {
			header = append(header, "ROLLOUT")
		}
		if cols.Complete {
			header = append(header, "COMPLETE")
		}
		t.plainRow(append(header, "REASON", "AGE")...)
	}
	for _, o := range owners {
		var row []text
		if opts.AllNamespaces {
			row = append(row, plain(o.Namespace))
		}
		blueprint := "-"
		if o.Blueprint != nil {
			blueprint = o.Blueprint.Name
		}
		row = append(row, plain(o.Name), plain(blueprint), plain(strconv.FormatInt(o.Generation, 10)),
			o.atGeneration(o.Condition(v1alpha1.ConditionReady)), o.atGeneration(o.Condition(v1alpha1.ConditionAvailable)),
			plain(resourceCount(o)))
		if cols.Rollout {
			row = append(row, plain(rolloutCell(o.Status.Rollout)))
		}
		if cols.Complete {
			row = append(row, conditionStatus(o.Condition(v1alpha1.ConditionComplete)))
		}
		reason := ""
		if c := o.Condition(v1alpha1.ConditionReady); c != nil && c.Status != metav1.ConditionTrue {
			reason = c.Reason
		}
		if !o.Observed() {
			reason = "NotObserved"
		}
		t.row(append(row, plain(reason), plain(opts.age(o.Created)))...)
	}
	return t.write(w, opts.Color)
}

// atGeneration is a condition's status, followed by the generation it speaks about when
// that is not the owner's current one: "True", "True (gen 3)", or "-" when it is missing.
func (o Owner) atGeneration(c *metav1.Condition) text {
	if c == nil {
		return plain("-")
	}
	t := statusText(c.Status)
	if c.ObservedGeneration != o.Generation && (c.Status == metav1.ConditionTrue || c.Type != v1alpha1.ConditionAvailable) {
		t = join(t, plain(fmt.Sprintf("(gen %d)", c.ObservedGeneration)))
	}
	return t
}

// conditionStatus is a condition's coloured status, or "-" when it is missing.
func conditionStatus(c *metav1.Condition) text {
	if c == nil {
		return plain("-")
	}
	return statusText(c.Status)
}

// resourceCount is "ready/total" over the owner's resources, or "-" without any.
func resourceCount(o Owner) string {
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

// rolloutCell is the owner's rollout state and group, or "-".
func rolloutCell(r *v1alpha1.OwnerRolloutStatus) string {
	switch {
	case r == nil:
		return "-"
	case r.Group != "":
		return string(r.State) + " (" + r.Group + ")"
	}
	return string(r.State)
}
