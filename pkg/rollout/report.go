package rollout

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// maxFailedOwners is how many failed owners status.rollout names.
const maxFailedOwners = 20

func (d *decision) plan() Plan {
	stopped := d.failures()
	// A rollout is complete when every owner is admitted, final and failures are within budget:
	// a rollout stopped by failures has not reached every owner, whatever their states.
	complete := d.settled || (allFinal(d.members) && stopped.reason == "")
	p := Plan{
		Owners: make([]v1alpha1.OwnerRolloutStatus, len(d.members)),
		Status: v1alpha1.BlueprintRolloutStatus{
			StableRevision: d.stable,
			TargetRevision: d.target,
			Counts:         counts(d.members),
			FailedOwners:   d.failedOwners(),
			NextCheckTime:  d.nextCheck(),
		},
	}
	for i, m := range d.members {
		p.Owners[i] = m.rec
	}
	for _, name := range d.groupNames() {
		p.Status.Groups = append(p.Status.Groups, v1alpha1.GroupRolloutStatus{Name: name, Counts: counts(d.groups[name])})
	}
	if complete {
		p.Status.StableRevision, p.Status.Complete = d.target, true
	} else if s := d.current(); s != nil {
		p.Status.CurrentGroup = s.group
	}
	p.Progressing = d.progressing(complete, stopped)
	p.Degraded = degraded(complete, stopped)
	p.Events = d.events(complete, stopped)
	return p
}

func counts(members []*member) v1alpha1.RolloutCounts {
	var c v1alpha1.RolloutCounts
	for _, m := range members {
		switch m.rec.State {
		case v1alpha1.RolloutToApply:
			c.ToApply++
		case v1alpha1.RolloutProgressing:
			c.Progressing++
		case v1alpha1.RolloutSucceeded:
			c.Succeeded++
		case v1alpha1.RolloutFailed:
			c.Failed++
		case v1alpha1.RolloutTimeOut:
			c.TimeOut++
		case v1alpha1.RolloutSkip:
			c.Skip++
		}
	}
	return c
}

func (d *decision) failedOwners() []string {
	var keys []string
	for _, m := range d.byKey {
		if isFailure(m) && len(keys) < maxFailedOwners {
			keys = append(keys, m.owner.Key)
		}
	}
	return keys
}

// current is the stage being admitted, the last one once every stage was reached, and nil when
// the rollout is settled or has no stage.
func (d *decision) current() *stage {
	if d.settled || len(d.stages) == 0 {
		return nil
	}
	return &d.stages[min(d.frontier, len(d.stages)-1)]
}

func (d *decision) progressing(complete bool, stopped verdict) metav1.Condition {
	c := metav1.Condition{Type: v1alpha1.ConditionRolloutProgressing}
	n := len(d.members)
	var parts []string
	switch {
	case complete:
		c.Status, c.Reason = metav1.ConditionFalse, v1alpha1.ReasonRolloutComplete
		parts = append(parts, d.reached())
	default:
		c.Status, c.Reason = metav1.ConditionTrue, v1alpha1.ReasonRolloutProgressing
		if d.superseded != "" {
			c.Reason = v1alpha1.ReasonRolloutSuperseded
			parts = append(parts, fmt.Sprintf("revision %s supersedes revision %s", d.target, d.superseded))
		} else if d.Paused {
			c.Reason = v1alpha1.ReasonRolloutPaused
		}
		if d.Paused {
			parts = append(parts, "paused")
		}
		parts = append(parts, fmt.Sprintf("%d of %d owners succeeded at revision %s",
			count(d.members, isState(v1alpha1.RolloutSucceeded)), n, d.target))
		if where := d.where(); where != "" {
			parts = append(parts, where)
		}
		if stopped.reason != "" {
			parts = append(parts, "admission stopped: "+stopped.message)
		}
	}
	c.Message = strings.Join(append(parts, d.problems...), "; ")
	return c
}

// reached says that the target reached every owner, and how they fare.
func (d *decision) reached() string {
	cs := counts(d.members)
	return fmt.Sprintf("revision %s reached all %d owners: %d succeeded, %d in progress, %d failed, %d skipped",
		d.target, len(d.members), cs.Succeeded, cs.Progressing, cs.Failed+cs.TimeOut, cs.Skip)
}

// where says which part of the rollout is being admitted or soaked.
func (d *decision) where() string {
	s := d.current()
	switch {
	case s == nil:
		return ""
	case s.rest && d.Type == v1alpha1.RolloutProgressive:
		return fmt.Sprintf("%d in flight, maxConcurrency %d",
			count(d.members, isState(v1alpha1.RolloutProgressing)), d.maxConcurrency(len(d.members)))
	case s.rest:
		return "every owner in no mandatory group admitted"
	}
	size := d.chunkSize(s)
	chunks := max((len(s.members)+size-1)/size, 1)
	n := count(s.members, admitted)
	chunk := min(max((n+size-1)/size, 1), chunks)
	return fmt.Sprintf("%s, chunk %d of %d", groupLabel(s.group), chunk, chunks)
}

func degraded(complete bool, stopped verdict) metav1.Condition {
	if complete || stopped.reason == "" {
		return metav1.Condition{Type: v1alpha1.ConditionRolloutDegraded, Status: metav1.ConditionFalse,
			Reason: v1alpha1.ReasonRolloutNotDegraded, Message: "failures are within maxFailures"}
	}
	return metav1.Condition{Type: v1alpha1.ConditionRolloutDegraded, Status: metav1.ConditionTrue,
		Reason: stopped.reason, Message: stopped.message}
}

// events are the transitions of this decision, each read as a difference between the input and
// the plan, so a replay records none.
func (d *decision) events(complete bool, stopped verdict) []Event {
	if d.settled {
		return nil
	}
	var events []Event
	add := func(warning bool, reason, format string, args ...any) {
		events = append(events, Event{Warning: warning, Reason: reason, Message: fmt.Sprintf(format, args...)})
	}
	if d.superseded != "" {
		add(false, v1alpha1.EventRolloutSuperseded, "revision %s supersedes revision %s, which had not reached every owner", d.target, d.superseded)
	}
	if d.started {
		add(false, v1alpha1.EventRolloutStarted, "rolling out revision %s to %d owners; the stable revision is %s", d.target, len(d.members), d.stable)
	}
	for _, name := range d.startedGroups() {
		ms := d.groups[name]
		add(false, v1alpha1.EventGroupStarted, "%s started: %d of %d owners admitted", groupLabel(name),
			count(ms, admitted), len(ms))
	}
	if stopped.reason == v1alpha1.ReasonMaxFailuresBreached && !d.breached {
		add(true, v1alpha1.EventMaxFailuresBreached, "admission stopped: %s", stopped.message)
	}
	if complete {
		add(false, v1alpha1.EventRolloutSucceeded, "%s", d.reached())
	}
	return events
}

// startedGroups are the groups, in admission order, whose first owners the rollout reached in this
// decision: the blueprint's status counted none of their owners admitted, and some are now, by
// their turn. Read from the blueprint's status rather than the owners' records, a decision whose
// admissions were written but whose status lost to a newer copy still records the event once.
func (d *decision) startedGroups() []string {
	var names []string
	for _, s := range d.stages {
		for _, m := range s.members {
			if m.byTurn && !d.groupStarted[m.group] && !slices.Contains(names, m.group) {
				names = append(names, m.group)
			}
		}
	}
	return names
}
