package view

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// Goal is what `kubectl carto wait --for` waits for.
type Goal string

const (
	// GoalReady is met when the owner is Ready at its current generation, and never by an
	// older one.
	GoalReady Goal = "ready"
	// GoalAvailable is met when the last good generation is serving: Available is True,
	// whichever generation it was last True at, so it holds while a newer generation
	// rolls out.
	GoalAvailable Goal = "available"
	// GoalComplete is met when the owner is Complete and the controller has observed its
	// current generation.
	GoalComplete Goal = "complete"
)

// Goals are the goals, in the order a user reads them.
var Goals = []Goal{GoalReady, GoalAvailable, GoalComplete}

// Outcome is where an owner stands against a Goal.
type Outcome int

const (
	// Waiting means the goal may still be met.
	Waiting Outcome = iota
	// Met means the goal is met.
	Met
	// Failed means Ready is False at the current generation, which only a change can
	// fix: waiting longer would only wait for the timeout.
	Failed
)

// Check says where an owner stands against goal. A met goal wins over a failure: a
// failed Job is Complete, and a Workload whose new generation fails still has its last
// good one Available.
func Check(o Owner, goal Goal) Outcome {
	if met(o, goal) {
		return Met
	}
	ready := o.Condition(v1alpha1.ConditionReady)
	if o.Observed() && ready != nil && ready.Status == metav1.ConditionFalse && ready.ObservedGeneration == o.Generation {
		return Failed
	}
	return Waiting
}

func met(o Owner, goal Goal) bool {
	switch goal {
	case GoalReady:
		return o.ReadyNow()
	case GoalAvailable:
		c := o.Condition(v1alpha1.ConditionAvailable)
		return c != nil && c.Status == metav1.ConditionTrue
	case GoalComplete:
		c := o.Condition(v1alpha1.ConditionComplete)
		return o.Observed() && c != nil && c.Status == metav1.ConditionTrue
	}
	return false
}

// State is one line saying where an owner stands against goal, e.g. "Workload dev/app:
// Available True at generation 3 (last good; generation 4 is not Ready yet)".
func State(o Owner, goal Goal) string {
	var line text
	switch goal {
	case GoalAvailable:
		line = join(plain("Available"), o.availableLine())
	case GoalComplete:
		c := o.Condition(v1alpha1.ConditionComplete)
		if c == nil {
			line = plain("Complete Unknown: not reported (its templates may have no Complete rule)")
		} else {
			line = join(plain("Complete"), statusText(c.Status), plain(fmt.Sprintf("at generation %d", c.ObservedGeneration)), plain(because(c)))
		}
		if !o.Observed() {
			line = join(line, plain(fmt.Sprintf("(the controller has not observed generation %d yet)", o.Generation)))
		}
	default:
		line = join(plain("Ready"), o.readyLine())
	}
	return Escape(o.Ref()) + ": " + line.render(false)
}
