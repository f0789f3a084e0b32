package view

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// PrintOwner prints one owner in full: a summary (its blueprint, Ready at the current
// generation beside Available at the last good one, its rollout, completion), its
// conditions with the generation each speaks about, and a row per resource with its
// template, Ready, Healthy, completion, generation and object.
func PrintOwner(w io.Writer, o Owner, opts Options) error {
	var b strings.Builder
	if err := o.summary().write(&b, opts.Color); err != nil {
		return err
	}

	b.WriteByte('\n')
	if err := writeConditions(&b, o.Kind, o.Status.Conditions, opts); err != nil {
		return err
	}

	if len(o.Status.Resources) > 0 {
		b.WriteByte('\n')
		complete := false
		for _, r := range o.Status.Resources {
			complete = complete || findCondition(r.Conditions, v1alpha1.ConditionComplete) != nil
		}
		res := table{}
		header := []string{"RESOURCE", "TEMPLATE", "READY", "HEALTHY"}
		if complete {
			header = append(header, "COMPLETE")
		}
		res.plainRow(append(header, "GEN", "OBJECT")...)
		for _, r := range o.Status.Resources {
			row := []text{plain(r.Name), plain(orDash(TemplateOf(r))), ConditionStatus(readyOf(r)),
				ConditionStatus(findCondition(r.Conditions, v1alpha1.ConditionHealthy))}
			if complete {
				row = append(row, ConditionStatus(findCondition(r.Conditions, v1alpha1.ConditionComplete)))
			}
			res.row(append(row, plain(generation(r.ObservedGeneration)), plain(orDash(ObjectOf(r))))...)
		}
		if err := res.write(&b, opts.Color); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Field is a labelled line of an owner's summary.
type Field struct {
	Label string
	Value []Span
}

// Summary is the owner at a glance, as get and tree print it first: its kind, name and
// generation, its blueprint, Ready at the current generation beside Available at the
// last good one, its rollout and its rule conditions.
func (o Owner) Summary() []Field {
	blueprint := "-"
	if o.Blueprint != nil {
		blueprint = o.Blueprint.Name
	}
	if o.Status.BlueprintRevision != "" {
		blueprint += " at revision " + o.Status.BlueprintRevision
	}
	fields := []Field{
		{o.Kind, plain(o.Namespace + "/" + o.Name + " (generation " + strconv.FormatInt(o.Generation, 10) + ")")},
		{capitalize(o.BlueprintTerm()), plain(blueprint)},
		{"Ready", o.readyLine()},
		{"Available", o.availableLine()},
	}
	if r := o.Status.Rollout; r != nil {
		fields = append(fields, Field{"Rollout", plain(rolloutLine(r))})
	}
	for _, c := range o.ruleConditions() {
		fields = append(fields, Field{c.Type, join(statusText(c.Status), plain(because(&c)))})
	}
	return fields
}

// summary is Summary as a table.
func (o Owner) summary() *table {
	t := &table{}
	for _, f := range o.Summary() {
		t.row(plain(f.Label+":"), f.Value)
	}
	return t
}

// readyLine says whether the owner is Ready at its current generation, and why not.
func (o Owner) readyLine() text {
	return readyLine(o.Condition(v1alpha1.ConditionReady), o.Observed(), o.Generation)
}

// readyLine says whether an object whose Ready condition is c (nil when missing) is Ready at
// its current generation, and why not; observed says its status speaks about generation.
func readyLine(c *metav1.Condition, observed bool, generation int64) text {
	if c == nil {
		return plain("Unknown: the controller has not reported on it yet")
	}
	t := join(statusText(c.Status), plain(fmt.Sprintf("at generation %d", c.ObservedGeneration)))
	if !observed {
		return join(t, plain(fmt.Sprintf("(the controller has not observed generation %d yet)", generation)))
	}
	if c.Status != metav1.ConditionTrue {
		t = join(t, plain(because(c)))
	}
	return t
}

// writeConditions writes an object's conditions, of kind, as a table: type, status, the
// generation each speaks about, reason, age and message.
func writeConditions(b *strings.Builder, kind string, conditions []metav1.Condition, opts Options) error {
	if len(conditions) == 0 {
		fmt.Fprintf(b, "No conditions: the controller has not reported on this %s yet.\n", strings.ToLower(kind))
		return nil
	}
	conds := table{}
	conds.plainRow("CONDITION", "STATUS", "GEN", "REASON", "AGE", "MESSAGE")
	for _, c := range conditions {
		conds.row(plain(c.Type), statusText(c.Status), plain(generation(c.ObservedGeneration)), plain(c.Reason),
			plain(opts.Age(c.LastTransitionTime.Time)), plain(oneLine(c.Message)))
	}
	return conds.write(b, opts.Color)
}

// availableLine says which generation is the last known good, and whether a newer one is
// on its way.
func (o Owner) availableLine() text {
	c := o.Condition(v1alpha1.ConditionAvailable)
	if c == nil {
		return plain("Unknown: the controller has not reported on it yet")
	}
	if c.Status != metav1.ConditionTrue {
		return join(statusText(c.Status), plain(because(c)))
	}
	t := join(statusText(c.Status), plain(fmt.Sprintf("at generation %d", c.ObservedGeneration)))
	if c.ObservedGeneration < o.Generation {
		return join(t, plain(fmt.Sprintf("(last good; generation %d is not Ready yet)", o.Generation)))
	}
	return join(t, plain("(last good)"))
}

// rolloutLine is an owner's place in its blueprint's rollout.
func rolloutLine(r *v1alpha1.OwnerRolloutStatus) string {
	s := fmt.Sprintf("%s at revision %s", r.State, r.Revision)
	if r.Group != "" {
		s += ", group " + r.Group
	}
	return s + ", since " + r.LastTransitionTime.UTC().Format(time.RFC3339)
}

// because is "(Reason): message", or "(Reason)" alone: why a condition has its status.
func because(c *metav1.Condition) string {
	if c.Message == "" {
		return "(" + c.Reason + ")"
	}
	return "(" + c.Reason + "): " + oneLine(c.Message)
}

// reasonMessage is "Reason: message", or the reason alone.
func reasonMessage(c *metav1.Condition) string {
	if c.Message == "" {
		return c.Reason
	}
	return c.Reason + ": " + oneLine(c.Message)
}

// oneLine is s with its line breaks, and the spaces around them, made one space: a CEL
// error's caret diagram would otherwise break a table or a "why" line.
func oneLine(s string) string {
	if !strings.Contains(s, "\n") {
		return s
	}
	lines := strings.Split(s, "\n")
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	return strings.Join(slices.DeleteFunc(lines, func(l string) bool { return l == "" }), " ")
}

func generation(g int64) string {
	if g == 0 {
		return "-"
	}
	return strconv.FormatInt(g, 10)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// PrintConditions prints conditions as a table: type, status, reason and message.
func PrintConditions(w io.Writer, conds []metav1.Condition, opts Options) error {
	t := table{}
	t.plainRow("CONDITION", "STATUS", "REASON", "MESSAGE")
	for _, c := range conds {
		t.row(plain(c.Type), statusText(c.Status), plain(c.Reason), plain(oneLine(c.Message)))
	}
	return t.write(w, opts.Color)
}
