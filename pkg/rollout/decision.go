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
	// rec is the owner's record for the target: its own once admitted to it, otherwise ToApply
	// (never written: the owner keeps the record it has).
	rec v1alpha1.OwnerRolloutStatus
	// group is the group the owner counts in: the one recorded at its admission (admission never
	// moves backwards, even if the owner's labels change), else the one its labels choose now.
	group string
	// byTurn: admitted in this decision because the rollout reached it.
	byTurn bool
}

// runs is the revision the owner runs or is pinned to before this decision: the one its record
// admits it to, else the one it was last realized at ("" if none).
func (m *member) runs() string {
	if r := m.owner.Record; r != nil && r.State != v1alpha1.RolloutToApply {
		return r.Revision
	}
	return m.owner.Running
}

// stage is one step of admission: a group, or, for Progressive and All, every owner in no
// mandatory group (rest).
type stage struct {
	group   string // "" for the owners in no group, and for rest
	members []*member
	rest    bool
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
	stages  []stage              // admission order
	// frontier is the index of the stage being admitted: the stages before it are finished.
	// It only moves forward, and a finished stage is never waited for again.
	frontier int
	// breached says the blueprint already reported MaxFailuresBreached (Input.Degraded).
	breached bool
	// groupStarted are the groups in which the blueprint's status, as last written for the target,
	// already counted an admitted owner.
	groupStarted map[string]bool
}

func newDecision(in Input) *decision {
	d := &decision{
		rules:  readRules(in.Strategy),
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
	d.phase = phaseOf(in.Target, in.Previous, d.members)
	d.stages = d.stageOrder()
	d.groupStarted = map[string]bool{}
	if p := in.Previous; p != nil && p.TargetRevision == in.Target && !p.Complete {
		for _, g := range p.Groups {
			d.groupStarted[g.Name] = g.Counts != (v1alpha1.RolloutCounts{ToApply: g.Counts.ToApply})
		}
		d.frontier = d.resume(p)
	}
	d.breached = in.Degraded != nil && in.Degraded.Status == metav1.ConditionTrue && in.Degraded.Reason == v1alpha1.ReasonMaxFailuresBreached
	return d
}

// resume is the stage the last decision for the target was admitting (status.currentGroup), so
// that admission never moves backwards. For ProgressivePerGroup, an empty currentGroup is the
// owners in no group only when the status counted such owners; otherwise the walk starts from
// the first stage, which only the owners' own states can hold.
func (d *decision) resume(p *v1alpha1.BlueprintRolloutStatus) int {
	if p.CurrentGroup == "" && d.Type == v1alpha1.RolloutProgressivePerGroup &&
		!slices.ContainsFunc(p.Groups, func(g v1alpha1.GroupRolloutStatus) bool { return g.Name == "" }) {
		return 0
	}
	return max(slices.IndexFunc(d.stages, func(s stage) bool { return s.group == p.CurrentGroup }), 0)
}

// member reads an owner's record: kept when it admits the owner to the target, otherwise (new
// owner, older target) the owner is ToApply for the target and keeps running what it runs.
func (d *decision) member(o *Owner) *member {
	m := &member{owner: o, group: d.groupOf(o.Labels)}
	rec := o.Record
	if rec != nil && rec.Revision == d.target && rec.State != v1alpha1.RolloutToApply {
		// The record keeps the group it was admitted in, even one the strategy no longer has
		// (a strategy edit rewrites no owner); the owner counts where its labels put it then.
		m.rec = *rec.DeepCopy()
		if d.isGroup(rec.Group) {
			m.group = rec.Group
		}
		return m
	}
	m.rec = v1alpha1.OwnerRolloutStatus{Revision: d.target, State: v1alpha1.RolloutToApply, Group: m.group, LastTransitionTime: d.now}
	return m
}

// stageOrder is the mandatory groups first, in mandatoryGroups order; then, for
// ProgressivePerGroup, the other groups in spec order and the owners in no group; otherwise
// every other owner, as one stage.
func (d *decision) stageOrder() []stage {
	var order []stage
	for _, name := range d.mandatory {
		order = append(order, stage{group: name, members: d.groups[name]})
	}
	if d.Type == v1alpha1.RolloutProgressivePerGroup {
		for _, g := range d.Groups {
			if !d.isMandatory(g.Name) {
				order = append(order, stage{group: g.Name, members: d.groups[g.Name]})
			}
		}
		if len(d.groups[""]) > 0 {
			order = append(order, stage{members: d.groups[""]})
		}
		return order
	}
	rest := stage{rest: true}
	for _, m := range d.byKey {
		if !d.isMandatory(m.group) {
			rest.members = append(rest.members, m)
		}
	}
	return append(order, rest)
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

// admit admits the owners the rollout has reached and reports whether it admitted any. While
// failures stop the rollout nothing is admitted and it stays where it is; while it is paused it
// still moves past the stages that are finished, admitting nobody.
func (d *decision) admit() bool {
	changed := false
	if d.settled {
		for _, m := range d.members {
			changed = d.enter(m, false) || changed
		}
		return changed
	}
	if d.failures().reason != "" {
		return false
	}
	if !d.Paused {
		// An owner that already runs the target (a revert to a revision it never left)
		// changes nothing it runs when admitted, so it does not wait for its turn.
		for _, m := range d.members {
			if m.runs() == d.target {
				changed = d.enter(m, false) || changed
			}
		}
	}
	for i := range d.stages {
		s := &d.stages[i]
		if i < d.frontier {
			// A finished stage: an owner that appears in it is admitted at once and holds
			// nothing.
			for _, m := range s.members {
				changed = !d.Paused && d.enter(m, true) || changed
			}
			continue
		}
		d.frontier = i
		switch {
		case d.Paused && (s.rest && d.Type == v1alpha1.RolloutProgressive || !allFinal(s.members)):
			return changed
		case s.rest && d.Type == v1alpha1.RolloutProgressive:
			return d.admitInFlight(s.members) || changed
		case !allFinal(s.members):
			return d.admitChunk(s) || changed
		}
	}
	d.frontier = len(d.stages)
	return changed
}

// admitChunk admits the next chunk of a stage once every owner admitted in it is final: the next
// ownersPerGroup owners not yet admitted, in Key order. It reports whether it admitted any.
func (d *decision) admitChunk(s *stage) bool {
	for _, m := range s.members {
		if admitted(m) && !isFinal(m) {
			return false
		}
	}
	size, changed := d.chunkSize(s), false
	for _, m := range s.members {
		if size == 0 {
			break
		}
		if m.rec.State == v1alpha1.RolloutToApply {
			changed = d.enter(m, true) || changed
			size--
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
		if admitted(m) {
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

// enter admits a ToApply owner. It is Skip when it runs the stable revision and is not observed
// Ready there (it was already unwell; it must neither block nor count), and Progressing
// otherwise: an owner that runs a superseded revision, or whose health is not known at its
// generation, is never Skip. A stale owner waits, still ToApply, until its status says how it
// is.
func (d *decision) enter(m *member, byTurn bool) bool {
	if admitted(m) || m.owner.Stale {
		return false
	}
	state := v1alpha1.RolloutProgressing
	status, seen := m.owner.observed()
	if runs := m.runs(); (runs == "" || runs == d.stable) && (seen && status != metav1.ConditionTrue || m.owner.Ready == nil) {
		state = v1alpha1.RolloutSkip
	}
	m.rec = v1alpha1.OwnerRolloutStatus{
		Revision: d.target, State: state, Group: m.group,
		LastTransitionTime: d.now, AdmittedTime: d.now.DeepCopy(),
	}
	m.byTurn = byTurn
	return true
}

// chunkSize is how many owners of a stage are admitted together: ownersPerGroup (a percentage of
// every owner the blueprint selects; above the stage's size, the whole stage), at least one.
// Every other owner of Progressive and All is admitted as one (Progressive limits it with
// maxConcurrency instead).
func (d *decision) chunkSize(s *stage) int {
	n := len(s.members)
	if s.rest {
		return n
	}
	return max(min(scale(d.OwnersPerGroup, len(d.members), n), n), 1)
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

func admitted(m *member) bool { return m.rec.State != v1alpha1.RolloutToApply }

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
