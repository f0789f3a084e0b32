package view

import (
	"fmt"
	"io"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// Problem is one thing that keeps an owner from being Ready at its current generation.
type Problem struct {
	// Resource is the resource at fault, empty for the owner itself.
	Resource string
	// Object names the resource's stamped object, Kind/name.
	Object string
	// Condition is the condition that says what is wrong, in the controller's words.
	Condition metav1.Condition
}

// reasonNotObserved is the reason of the Problem of a status that lags the owner's spec.
const reasonNotObserved = "NotObserved"

// Problems are the problems of an owner, in the order to fix them: a status the
// controller has not brought up to date, the owner's blueprint, then each resource that
// is not Ready, by the condition that decides it (ResourceSubmitted or Healthy). An owner
// that is not Ready without any of these gives its Ready condition; one that is Ready at
// its current generation has none.
func Problems(o Owner) []Problem {
	if o.ReadyNow() {
		return nil
	}
	var out []Problem
	if !o.Observed() {
		out = append(out, Problem{Condition: metav1.Condition{
			Type: v1alpha1.ConditionReady, Status: metav1.ConditionUnknown, Reason: reasonNotObserved,
			Message: fmt.Sprintf("the controller has not observed generation %d yet (the status is for generation %d)", o.Generation, o.Status.ObservedGeneration),
		}})
	}
	if c := o.BlueprintCondition(); c != nil && c.Status != metav1.ConditionTrue {
		// Without a blueprint the resources listed are those of an earlier one.
		return append(out, Problem{Condition: *c})
	}
	for _, r := range o.Status.Resources {
		if status(readyOf(r)) == metav1.ConditionTrue {
			continue
		}
		p := Problem{Resource: r.Name, Object: ObjectOf(r)}
		if c := deciding(r); c != nil {
			p.Condition = *c
		} else {
			p.Condition = metav1.Condition{Type: v1alpha1.ConditionReady, Status: metav1.ConditionUnknown, Reason: "NotReported", Message: "the resource has no conditions yet"}
		}
		out = append(out, p)
	}
	if len(out) > 0 {
		return out
	}
	c := o.Condition(v1alpha1.ConditionReady)
	if c == nil {
		c = &metav1.Condition{Type: v1alpha1.ConditionReady, Status: metav1.ConditionUnknown, Reason: "NotReported",
			Message: "the controller has not reported on it yet"}
	}
	return []Problem{{Condition: *c}}
}

// PrintWhy prints one line per problem (see Problems): the resource and its object, or
// the owner, then the deciding condition's type, status, reason and message. An owner
// that is Ready at its current generation gets one line saying so.
func PrintWhy(w io.Writer, o Owner, opts Options) error {
	problems := Problems(o)
	var b strings.Builder
	if len(problems) == 0 {
		t := join(plain(o.Ref()+" is"), text{{"Ready", metav1.ConditionTrue}}, plain(fmt.Sprintf("at generation %d", o.Generation)))
		b.WriteString(t.render(opts.Color) + "\n")
	}
	for _, p := range problems {
		b.WriteString(p.text(o).render(opts.Color) + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Line is the problem as PrintWhy prints it, without colours: the resource and its
// object, or the owner o, then the condition's type, status, reason and message.
func (p Problem) Line(o Owner) string { return p.text(o).render(false) }

func (p Problem) text(o Owner) text {
	who := o.Ref() + ":"
	switch {
	case p.Object != "":
		who = fmt.Sprintf("%s (%s):", p.Resource, p.Object)
	case p.Resource != "":
		who = p.Resource + ":"
	}
	c := p.Condition
	return join(plain(who), append(plain(c.Type+"="), statusText(c.Status)...), plain(reasonMessage(&c)))
}
