package rollout

import (
	"fmt"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// observed is the owner's Ready status when its Ready condition was observed at its current
// generation, and false when it lags an edit or is missing: only such a Ready is evidence.
func (o *Owner) observed() (metav1.ConditionStatus, bool) {
	if o.Ready == nil || o.Ready.ObservedGeneration != o.Generation {
		return "", false
	}
	return o.Ready.Status, true
}

// step makes one transition of an admitted owner's state, and reports whether it made one.
//
// Evidence (DESIGN §9) is a Ready condition observed at the owner's generation while it runs the
// target. Without it (the owner was edited and its status is not written yet, or it is not
// stamped from the target yet) its state holds, whatever it is. Every time is the owner's own
// record or Ready condition, never Now alone, so a restarted controller finds the same soak and
// the same deadline; no failure is decided by comparing times.
func (d *decision) step(m *member) bool {
	o, rec := m.owner, &m.rec
	if o.Stale || rec.State == v1alpha1.RolloutToApply {
		return false
	}
	status, seen := o.observed()
	seen = seen && o.Running == d.target
	ready := seen && status == metav1.ConditionTrue
	soaking := rec.State != v1alpha1.RolloutSucceeded && rec.State != v1alpha1.RolloutFailed
	switch {
	case ready && soaking && rec.ReadyTime == nil:
		// The first status that shows it Ready at the target: the soak starts here.
		rec.ReadyTime = d.now.DeepCopy()
		return true
	case seen && !ready && rec.State == v1alpha1.RolloutSucceeded:
		// A flap: back to Progressing; the soak and the deadline start again.
		rec.ReadyTime, rec.AdmittedTime = nil, d.now.DeepCopy()
		return d.move(rec, v1alpha1.RolloutProgressing)
	case seen && !ready && rec.ReadyTime != nil:
		// A flap while soaking: the soak starts again the next time it is Ready.
		rec.ReadyTime = nil
		return true
	}
	switch rec.State {
	case v1alpha1.RolloutProgressing:
		switch {
		case ready && d.soaked(m):
			return d.move(rec, v1alpha1.RolloutSucceeded)
		case seen && status == metav1.ConditionFalse:
			return d.move(rec, v1alpha1.RolloutFailed)
		}
		return rec.ReadyTime == nil && d.pastDeadline(rec) && d.move(rec, v1alpha1.RolloutTimeOut)
	case v1alpha1.RolloutFailed:
		// Only a Ready observed at its generation, and not False, ends a failure.
		if seen && status != metav1.ConditionFalse {
			return d.move(rec, v1alpha1.RolloutProgressing)
		}
		return d.pastDeadline(rec) && d.move(rec, v1alpha1.RolloutTimeOut)
	case v1alpha1.RolloutTimeOut:
		// Only a Ready owner leaves TimeOut: one Ready at the target and soaking does not time
		// out, so it cannot fall back into TimeOut at once.
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

// soakEnd is when an owner Ready at the target has been Ready for minSuccessTime: counted from
// the first status that showed it Ready there (ReadyTime), or from a later Ready transition
// (it flapped between two looks).
func (d *decision) soakEnd(m *member) time.Time {
	start := m.rec.ReadyTime.Time
	if r := m.owner.Ready.LastTransitionTime.Time; r.After(start) {
		start = r
	}
	return start.Add(d.minSuccess)
}

func (d *decision) soaked(m *member) bool {
	return !d.now.Time.Before(d.soakEnd(m))
}

// deadlineOf is when an admitted owner times out; zero when there is no progressDeadline. A
// record without an admission time counts from its last transition.
func (d *decision) deadlineOf(rec *v1alpha1.OwnerRolloutStatus) time.Time {
	if d.deadline == 0 {
		return time.Time{}
	}
	from := rec.LastTransitionTime
	if rec.AdmittedTime != nil {
		from = *rec.AdmittedTime
	}
	return from.Add(d.deadline)
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
		switch m.rec.State {
		case v1alpha1.RolloutProgressing, v1alpha1.RolloutSkip:
			if m.rec.ReadyTime != nil && m.owner.Ready != nil {
				consider(d.soakEnd(m))
			}
		}
		if (m.rec.State == v1alpha1.RolloutProgressing || m.rec.State == v1alpha1.RolloutFailed) && m.rec.ReadyTime == nil {
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
// maxFailures; for Progressive, all owners together may; All has no budget.
func (d *decision) failures() verdict {
	for _, name := range d.mandatory {
		ms := d.groups[name]
		if f := count(ms, isFailure); f > 0 {
			return verdict{v1alpha1.ReasonMandatoryGroupFailed,
				fmt.Sprintf("mandatory group %s: %d of %d owners failed, and none may", name, f, len(ms))}
		}
	}
	switch d.Type {
	case v1alpha1.RolloutProgressive:
		return d.budget("", d.members)
	case v1alpha1.RolloutProgressivePerGroup:
		for _, name := range d.groupNames() {
			if v := d.budget(groupLabel(name)+": ", d.groups[name]); v.reason != "" {
				return v
			}
		}
	}
	return verdict{}
}

// budget judges the failures among ms against maxFailures, a percentage of every owner.
func (d *decision) budget(where string, ms []*member) verdict {
	allowed := scale(d.MaxFailures, len(d.members), 0)
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
