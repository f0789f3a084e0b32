package rollout

import (
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// member is one owner during a decision: its record as it is being rewritten and its group.
type member struct {
	owner *Owner
	rec   v1alpha1.OwnerRolloutStatus
	// group is the group the owner counts in: the one recorded at its admission (admission never
	// moves backwards, even if the owner's labels change), else the one its labels choose now.
	group string
	// byTurn: admitted in this decision because the rollout reached it.
	byTurn bool
}

// segment is one step of admission: a chunk of a group, or, for Progressive and All, every owner
// that is in no mandatory group.
type segment struct {
	group         string
	chunk, chunks int // 1-based
	members       []*member
	rest          bool
}

// decision is the working state of one call to Decide.
type decision struct {
	rules
	phase
	target  string
	now     metav1.Time
	members []*member            // parallel to Input.Owners
	byKey   []*member            // the same, sorted by Key
	groups  map[string][]*member // sorted by Key
	order   []segment            // admission order
	// breached says the blueprint already reported MaxFailuresBreached (Input.Degraded).
	breached bool
	// groupStarted are the groups in which the blueprint's status, as last written for the target,
	// already counted an admitted owner.
	groupStarted map[string]bool
}

func newDecision(in Input) *decision {
	d := &decision{
		rules:  readRules(in.Strategy),
		phase:  phaseOf(in.Target, in.Previous),
		target: in.Target,
		// The API stores times to the second; deciding at that precision makes a decision
		// replayed from what was written and read back the same decision.
		now:    metav1.NewTime(in.Now).Rfc3339Copy(),
		groups: map[string][]*member{},
	}
	for i := range in.Owners {
		d.members = append(d.members, d.member(&in.Owners[i]))
	}
	d.byKey = slices.Clone(d.members)
	slices.SortStableFunc(d.byKey, func(a, b *member) int { return strings.Compare(a.owner.Key, b.owner.Key) })
	for _, m := range d.byKey {
		d.groups[m.group] = append(d.groups[m.group], m)
	}
	d.order = d.admissionOrder()
	d.groupStarted = map[string]bool{}
	if p := in.Previous; p != nil && p.TargetRevision == in.Target {
		for _, g := range p.Groups {
			d.groupStarted[g.Name] = g.Counts != (v1alpha1.RolloutCounts{ToApply: g.Counts.ToApply})
		}
	}
	d.breached = in.Degraded != nil && in.Degraded.Status == metav1.ConditionTrue && in.Degraded.Reason == v1alpha1.ReasonMaxFailuresBreached
	return d
}

// member reads an owner's record: kept when it is admitted to the target, otherwise (new owner,
// older target) the owner is ToApply for the target and keeps running what it runs.
func (d *decision) member(o *Owner) *member {
	m := &member{owner: o, group: d.groupOf(o.Labels)}
	rec := o.Record
	if rec != nil && rec.Revision == d.target && rec.State != v1alpha1.RolloutToApply {
		m.rec = *rec.DeepCopy()
		if d.isGroup(rec.Group) {
			m.group = rec.Group
		}
		m.rec.Group = m.group
		return m
	}
	m.rec = v1alpha1.OwnerRolloutStatus{Revision: d.target, State: v1alpha1.RolloutToApply, Group: m.group, LastTransitionTime: d.now}
	if rec != nil && rec.Revision == d.target {
		m.rec.LastTransitionTime = rec.LastTransitionTime
	}
	return m
}

// admissionOrder is mandatory groups first, chunk by chunk; then, for ProgressivePerGroup, the
// other groups in spec order and the owners in no group, chunk by chunk; otherwise every other
// owner in Key order, as one segment.
func (d *decision) admissionOrder() []segment {
	var order []segment
	for _, name := range d.mandatory {
		order = append(order, d.chunked(name)...)
	}
	if d.Type == v1alpha1.RolloutProgressivePerGroup {
		for _, g := range d.Groups {
			if !d.isMandatory(g.Name) {
				order = append(order, d.chunked(g.Name)...)
			}
		}
		return append(order, d.chunked("")...)
	}
	rest := segment{rest: true}
	for _, m := range d.byKey {
		if !d.isMandatory(m.group) {
			rest.members = append(rest.members, m)
		}
	}
	if len(rest.members) > 0 {
		order = append(order, rest)
	}
	return order
}

func (d *decision) chunked(group string) []segment {
	chunks := d.chunks(d.groups[group])
	out := make([]segment, len(chunks))
	for i, c := range chunks {
		out[i] = segment{group: group, chunk: i + 1, chunks: len(chunks), members: c}
	}
	return out
}

// settle alternates owner transitions and admissions until neither changes anything, so that the
// plan is a fixed point: fed back as input with the same time, it decides nothing new.
// Transitions cannot cycle at a fixed time (each one's condition excludes the way back), so the
// bound only guards against a mistake here.
func (d *decision) settle() {
	for range 4*len(d.members) + 4 {
		changed := false
		for _, m := range d.members {
			for d.step(m) {
				changed = true
			}
		}
		if d.admit() {
			changed = true
		}
		if !changed {
			return
		}
	}
}

// admit admits the owners the rollout has reached and reports whether it admitted any.
func (d *decision) admit() bool {
	changed := false
	if d.settled {
		for _, m := range d.members {
			changed = d.enter(m, false) || changed
		}
		return changed
	}
	if d.Paused {
		return false
	}
	// An owner that already runs the target (a revert to a revision it never left) changes
	// nothing it runs when admitted, so it does not wait for its turn.
	for _, m := range d.members {
		if m.owner.Running == d.target {
			changed = d.enter(m, false) || changed
		}
	}
	if d.failures().reason != "" {
		return changed
	}
	for _, s := range d.order {
		if s.rest && d.Type == v1alpha1.RolloutProgressive {
			return d.admitInFlight(s.members) || changed
		}
		for _, m := range s.members {
			changed = d.enter(m, true) || changed
		}
		if !allFinal(s.members) {
			break
		}
	}
	return changed
}

// admitInFlight admits owners in Key order while fewer than maxConcurrency are Progressing.
func (d *decision) admitInFlight(members []*member) bool {
	limit := d.maxConcurrency(len(d.members))
	inFlight := count(d.members, isState(v1alpha1.RolloutProgressing))
	changed := false
	for _, m := range members {
		if m.rec.State != v1alpha1.RolloutToApply {
			continue
		}
		// A stale owner holds the line: admitting past it would break Key order and, from a
		// cache that has not yet seen the last decision's admissions, exceed maxConcurrency.
		if inFlight >= limit || m.owner.Stale {
			break
		}
		changed = d.enter(m, true) || changed
		if m.rec.State == v1alpha1.RolloutProgressing {
			inFlight++
		}
	}
	return changed
}

// enter admits a ToApply owner: Progressing if it is Ready at its generation when the rollout
// reaches it, Skip otherwise (it was already unwell; it must neither block nor count). A stale
// owner waits, still ToApply, until its status says how it is.
func (d *decision) enter(m *member, byTurn bool) bool {
	if m.rec.State != v1alpha1.RolloutToApply || m.owner.Stale {
		return false
	}
	state := v1alpha1.RolloutSkip
	if m.owner.readyIs(metav1.ConditionTrue) {
		state = v1alpha1.RolloutProgressing
	}
	admitted := d.now
	m.rec = v1alpha1.OwnerRolloutStatus{
		Revision: d.target, State: state, Group: m.group,
		LastTransitionTime: d.now, AdmittedTime: &admitted,
	}
	m.byTurn = byTurn
	return true
}

func allFinal(members []*member) bool {
	return count(members, isFinal) == len(members)
}

func count(members []*member, pred func(*member) bool) int {
	n := 0
	for _, m := range members {
		if pred(m) {
			n++
		}
	}
	return n
}

func isState(s v1alpha1.RolloutState) func(*member) bool {
	return func(m *member) bool { return m.rec.State == s }
}

func isFinal(m *member) bool {
	switch m.rec.State {
	case v1alpha1.RolloutSucceeded, v1alpha1.RolloutFailed, v1alpha1.RolloutTimeOut, v1alpha1.RolloutSkip:
		return true
	}
	return false
}

func isFailure(m *member) bool {
	return m.rec.State == v1alpha1.RolloutFailed || m.rec.State == v1alpha1.RolloutTimeOut
}
