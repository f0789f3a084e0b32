package rollout

import (
	"fmt"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// readyIs reports whether the owner's Ready condition has this status at the owner's generation.
func (o *Owner) readyIs(s metav1.ConditionStatus) bool {
	return o.Ready != nil && o.Ready.Status == s && o.Ready.ObservedGeneration == o.Generation
}

// step makes one transition of an admitted owner's state, and reports whether it made one.
//
// Every time is measured from the owner's own record (LastTransitionTime, AdmittedTime) and its
// Ready condition, never from Now alone, so that a restarted controller finds the same soak and
// the same deadline.
func (d *decision) step(m *member) bool {
	o, rec := m.owner, &m.rec
	if o.Stale {
		return false
	}
	atTarget := o.Running == d.target
	ready := atTarget && o.readyIs(metav1.ConditionTrue)
	failing := atTarget && o.readyIs(metav1.ConditionFalse)
	switch rec.State {
	case v1alpha1.RolloutProgressing:
		switch {
		case ready:
			return d.soaked(m) && d.move(rec, v1alpha1.RolloutSucceeded)
		case failing && !o.Ready.LastTransitionTime.Before(&rec.LastTransitionTime):
			// A Ready=False older than the record belongs to what the owner ran before.
			return d.move(rec, v1alpha1.RolloutFailed)
		}
		return d.pastDeadline(rec) && d.move(rec, v1alpha1.RolloutTimeOut)
	case v1alpha1.RolloutFailed:
		if !failing {
			return d.move(rec, v1alpha1.RolloutProgressing)
		}
		return d.pastDeadline(rec) && d.move(rec, v1alpha1.RolloutTimeOut)
	case v1alpha1.RolloutSucceeded:
		if !ready {
			// A flap: the soak restarts, and so does the deadline.
			admitted := d.now
			rec.AdmittedTime = &admitted
			return d.move(rec, v1alpha1.RolloutProgressing)
		}
	case v1alpha1.RolloutTimeOut:
		// Only a Ready owner leaves TimeOut: the deadline does not apply to an owner that is
		// Ready at the target and soaking, so it cannot time out again at once.
		if ready {
			return d.move(rec, v1alpha1.RolloutProgressing)
		}
	case v1alpha1.RolloutSkip:
		return ready && d.soaked(m) && d.move(rec, v1alpha1.RolloutSucceeded)
	}
	return false
}

func (d *decision) move(rec *v1alpha1.OwnerRolloutStatus, s v1alpha1.RolloutState) bool {
	rec.State, rec.LastTransitionTime = s, d.now
	return true
}

// soakEnd is when an owner Ready at the target has been Ready for minSuccessTime: measured from the
// later of its Ready transition and its record's, so neither an older Ready nor an older state
// shortens it.
func (d *decision) soakEnd(m *member) time.Time {
	start := m.rec.LastTransitionTime.Time
	if r := m.owner.Ready.LastTransitionTime.Time; r.After(start) {
		start = r
	}
	return start.Add(d.minSuccess)
}

func (d *decision) soaked(m *member) bool {
	return !d.now.Time.Before(d.soakEnd(m))
}

// deadline is when an admitted owner times out; zero when there is no progressDeadline.
func (d *decision) deadlineOf(rec *v1alpha1.OwnerRolloutStatus) time.Time {
	if d.deadline == 0 || rec.AdmittedTime == nil {
		return time.Time{}
	}
	return rec.AdmittedTime.Add(d.deadline)
}

func (d *decision) pastDeadline(rec *v1alpha1.OwnerRolloutStatus) bool {
	end := d.deadlineOf(rec)
	return !end.IsZero() && !d.now.Time.Before(end)
}

// nextCheck is the earliest future end of a soak or of a deadline: nothing else changes a state
// without an event on the owner.
func (d *decision) nextCheck() *metav1.Time {
	var next time.Time
	consider := func(t time.Time) {
		if t.After(d.now.Time) && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	for _, m := range d.members {
		ready := m.owner.Running == d.target && m.owner.readyIs(metav1.ConditionTrue)
		switch m.rec.State {
		case v1alpha1.RolloutProgressing, v1alpha1.RolloutSkip:
			if ready {
				consider(d.soakEnd(m))
			}
		}
		if (m.rec.State == v1alpha1.RolloutProgressing || m.rec.State == v1alpha1.RolloutFailed) && !ready {
			consider(d.deadlineOf(&m.rec))
		}
	}
	if next.IsZero() {
		return nil
	}
	t := metav1.NewTime(next)
	return &t
}

// verdict is whether failures stop admission, and why.
type verdict struct {
	reason  string // "", ReasonMandatoryGroupFailed or ReasonMaxFailuresBreached
	message string
}

// failures judges the owners' failures (Failed and TimeOut; Skip never counts): none are
// tolerated in a mandatory group; for ProgressivePerGroup, each other group may have up to
// maxFailures of its own size; otherwise all owners together may have up to maxFailures of all.
func (d *decision) failures() verdict {
	for _, name := range d.mandatory {
		ms := d.groups[name]
		if f := count(ms, isFailure); f > 0 {
			return verdict{v1alpha1.ReasonMandatoryGroupFailed,
				fmt.Sprintf("mandatory group %s: %d of %d owners failed, and none may", name, f, len(ms))}
		}
	}
	if d.Type != v1alpha1.RolloutProgressivePerGroup {
		return d.budget("", d.members)
	}
	for _, name := range d.groupNames() {
		if v := d.budget(groupLabel(name)+": ", d.groups[name]); v.reason != "" {
			return v
		}
	}
	return verdict{}
}

func (d *decision) budget(where string, ms []*member) verdict {
	allowed := scale(d.MaxFailures, len(ms), 0)
	if f := count(ms, isFailure); f > allowed {
		return verdict{v1alpha1.ReasonMaxFailuresBreached,
			fmt.Sprintf("%s%d of %d owners failed, more than maxFailures %d", where, f, len(ms), allowed)}
	}
	return verdict{}
}

// groupNames are the groups in rollout order: mandatory groups first, then the other named groups
// in spec order, then "" when some owner is in no group.
func (d *decision) groupNames() []string {
	names := slices.Clone(d.mandatory)
	for _, g := range d.Groups {
		if !d.isMandatory(g.Name) {
			names = append(names, g.Name)
		}
	}
	if len(d.groups[""]) > 0 {
		names = append(names, "")
	}
	return names
}

func groupLabel(name string) string {
	if name == "" {
		return "owners in no group"
	}
	return "group " + name
}
