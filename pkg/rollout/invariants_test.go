package rollout_test

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"pgregory.net/rapid"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/rollout"
)

// TestInvariants checks the invariants of DESIGN §9 after every step of random histories: a
// blueprint whose target changes, is superseded and reverted, whose status is lost; owners that
// are edited, flap, are added and deleted, each reconciled as the owner reconciler does
// (PinnedRevision; it carries its record as it is); decisions as the blueprint reconciler makes
// them (Decide, then writing the records it may write: it is their only writer); and time passing. A failing history shrinks to a short
// one, printed step by step. `make test` runs it with a fixed seed (RAPID_SEED), `make
// fuzz` (outside the gate) longer with a random one.
func TestInvariants(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w := newWorld(t)
		t.Repeat(map[string]func(*rapid.T){
			"decide":    w.decide,
			"reconcile": func(t *rapid.T) { w.reconcile(t, w.pickOwner(t)) },
			"edit": func(t *rapid.T) {
				o := w.pickOwner(t)
				o.Generation++
				t.Logf("edit %s: generation %d", o.Key, o.Generation)
			},
			"edit a failed owner": func(t *rapid.T) {
				var failed []*rollout.Owner
				for _, o := range w.owners {
					if o.Record != nil && isFailure(o.Record) {
						failed = append(failed, o)
					}
				}
				if len(failed) == 0 {
					t.Skip("no failed owner")
				}
				o := rapid.SampledFrom(failed).Draw(t, "failed owner")
				o.Generation++
				t.Logf("edit %s (%s): generation %d", o.Key, recordString(o.Record), o.Generation)
			},
			"flap": func(t *rapid.T) {
				o := w.pickOwner(t)
				rev := w.runs(o)
				w.health[o.Key][rev] = rapid.SampledFrom(healths).Draw(t, "health")
				t.Logf("health of %s at %s: %s", o.Key, rev, w.health[o.Key][rev])
			},
			"change": func(t *rapid.T) {
				w.revisions++
				rev := fmt.Sprintf("r%d", w.revisions)
				for _, key := range slices.Sorted(maps.Keys(w.health)) {
					w.health[key][rev] = rapid.SampledFrom(healths).Draw(t, "health "+key)
				}
				t.Logf("blueprint change: target %s", rev)
				w.target = rev
			},
			"revert": func(t *rapid.T) {
				rev := fmt.Sprintf("r%d", rapid.IntRange(1, w.revisions).Draw(t, "revision"))
				t.Logf("blueprint revert: target %s", rev)
				w.target = rev
			},
			"add":    func(t *rapid.T) { w.add(t) },
			"delete": w.delete,
			"lose status": func(t *rapid.T) {
				t.Logf("the blueprint is restored without its status")
				w.status, w.degraded = nil, nil
			},
			"wait": func(t *rapid.T) {
				d := rapid.SampledFrom([]time.Duration{time.Second, 30 * time.Second, 2 * time.Minute, 11 * time.Minute}).Draw(t, "wait")
				w.now = w.now.Add(d)
				t.Logf("wait %s", d)
			},
			"": w.check,
		})
		w.converge(t)
	})
}

var healths = []metav1.ConditionStatus{metav1.ConditionTrue, metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionUnknown}

// world is the API as the two reconcilers see it, one step at a time.
type world struct {
	strategy  v1alpha1.RolloutStrategy
	target    string // the blueprint's current revision
	revisions int
	status    *v1alpha1.BlueprintRolloutStatus // as last written
	degraded  *metav1.Condition
	owners    []*rollout.Owner
	// health is what each owner's resources report at each revision.
	health map[string]map[string]metav1.ConditionStatus
	now    time.Time
	added  int
	// admitted is, per owner, the target it was admitted to when the last step ended, and
	// failed whether it was Failed or TimeOut there.
	admitted map[string]string
	failed   map[string]bool
}

func newWorld(t *rapid.T) *world {
	w := &world{strategy: drawStrategy(t), target: "r1", revisions: 1, health: map[string]map[string]metav1.ConditionStatus{},
		now: t0, admitted: map[string]string{}, failed: map[string]bool{}}
	for range rapid.IntRange(1, 6).Draw(t, "owners") {
		w.add(t)
	}
	t.Logf("strategy %+v", w.strategy)
	return w
}

func drawStrategy(t *rapid.T) v1alpha1.RolloutStrategy {
	s := v1alpha1.RolloutStrategy{
		Type:           rapid.SampledFrom([]v1alpha1.RolloutType{v1alpha1.RolloutAll, v1alpha1.RolloutProgressive, v1alpha1.RolloutProgressivePerGroup}).Draw(t, "type"),
		OwnersPerGroup: rapid.SampledFrom([]*intstr.IntOrString{nil, intOr(1), intOr(2), pct("34%")}).Draw(t, "ownersPerGroup"),
		MaxFailures:    rapid.SampledFrom([]*intstr.IntOrString{nil, intOr(1), pct("50%")}).Draw(t, "maxFailures"),
		MinSuccessTime: rapid.SampledFrom([]*metav1.Duration{nil, dur(time.Minute), dur(5 * time.Minute)}).Draw(t, "minSuccessTime"),
		ProgressDeadline: rapid.SampledFrom([]v1alpha1.ProgressDeadline{"", v1alpha1.ProgressDeadlineNone, "10m"}).
			Draw(t, "progressDeadline"),
		Paused: rapid.IntRange(0, 5).Draw(t, "paused") == 0,
	}
	if s.Type == v1alpha1.RolloutProgressive {
		s.MaxConcurrency = rapid.SampledFrom([]*intstr.IntOrString{nil, intOr(1), pct("30%")}).Draw(t, "maxConcurrency")
	}
	for _, tier := range []string{"a", "b", "c"}[:rapid.IntRange(0, 3).Draw(t, "groups")] {
		s.Groups = append(s.Groups, group(tier, tier))
	}
	if len(s.Groups) > 0 && rapid.Bool().Draw(t, "mandatory") {
		s.MandatoryGroups = []string{s.Groups[rapid.IntRange(0, len(s.Groups)-1).Draw(t, "mandatory group")].Name}
	}
	return s
}

func (w *world) add(t *rapid.T) {
	w.added++
	o := &rollout.Owner{Key: fmt.Sprintf("ns/o%d", w.added), Generation: 1}
	if tier := rapid.SampledFrom([]string{"", "a", "b", "c"}).Draw(t, "tier"); tier != "" {
		o.Labels = map[string]string{"tier": tier}
	}
	w.health[o.Key] = map[string]metav1.ConditionStatus{}
	for i := 1; i <= w.revisions; i++ {
		w.health[o.Key][fmt.Sprintf("r%d", i)] = rapid.SampledFrom(healths).Draw(t, "health")
	}
	w.owners = append(w.owners, o)
	t.Logf("add %s %v", o.Key, o.Labels)
}

func (w *world) delete(t *rapid.T) {
	if len(w.owners) == 0 {
		t.Skip("no owner")
	}
	i := rapid.IntRange(0, len(w.owners)-1).Draw(t, "owner")
	t.Logf("delete %s", w.owners[i].Key)
	delete(w.admitted, w.owners[i].Key)
	w.owners = slices.Delete(w.owners, i, i+1)
}

func (w *world) pickOwner(t *rapid.T) *rollout.Owner {
	if len(w.owners) == 0 {
		t.Skip("no owner")
	}
	return w.owners[rapid.IntRange(0, len(w.owners)-1).Draw(t, "owner")]
}

// runs is the revision an owner is stamped from when it is reconciled next.
func (w *world) runs(o *rollout.Owner) string {
	if rev := rollout.PinnedRevision(o.Record, o.Running, w.status); rev != "" {
		return rev
	}
	return w.target // no blueprint status: the blueprint as it is
}

func (w *world) stable() string {
	if w.status == nil {
		return ""
	}
	return w.status.StableRevision
}

// reconcile is the owner reconciler: it is stamped from the revision its record pins and reports
// Ready at its generation. It never changes its record: only the blueprint's decisions do.
func (w *world) reconcile(t *rapid.T, o *rollout.Owner) {
	rev := w.runs(o)
	// No owner runs the target before it is admitted (a revert to the stable revision
	// excepted: the owners never left it).
	if target := w.statusTarget(); rev == target && o.Running != target && target != w.stable() && !admits(o.Record, target) {
		t.Fatalf("%s is stamped from the target %s without being admitted to it (record %s)", o.Key, target, recordString(o.Record))
	}
	o.Running = rev
	status := w.health[o.Key][rev]
	if o.Ready == nil || o.Ready.Status != status {
		o.Ready = &metav1.Condition{Type: v1alpha1.ConditionReady, Status: status, LastTransitionTime: metav1.NewTime(w.now).Rfc3339Copy()}
	}
	o.Ready.ObservedGeneration = o.Generation
	t.Logf("reconcile %s: runs %s, Ready %s, record %s", o.Key, o.Running, o.Ready.Status, recordString(o.Record))
}

// statusTarget is the target as owners see it: in the blueprint's status.
func (w *world) statusTarget() string {
	if w.status == nil {
		return ""
	}
	return w.status.TargetRevision
}

// decide is the blueprint reconciler: one decision, its status written, then the records it
// writes (never a ToApply one).
func (w *world) decide(t *rapid.T) {
	in := w.input()
	p := rollout.Decide(in)
	checkDecision(t, w.strategy, in, p)
	w.status, w.degraded = &p.Status, &p.Degraded
	for i, o := range w.owners {
		rec := p.Owners[i]
		if rec.State == v1alpha1.RolloutToApply || equality.Semantic.DeepEqual(o.Record, &rec) {
			continue
		}
		o.Record = &rec
	}
	t.Logf("decide at %s: %s (%s); %s", in.Target, p.Progressing.Reason, p.Progressing.Message, recordsString(w.owners))
	w.checkRecorded(t)
}

func (w *world) input() rollout.Input {
	in := rollout.Input{Strategy: w.strategy, Target: w.target, Previous: w.status, Degraded: w.degraded, Now: w.now}
	for _, o := range w.owners {
		in.Owners = append(in.Owners, *o)
	}
	return in
}

// check runs after every step: admission never moves backwards, and a failure is never
// forgotten while the owner is Ready=False at its generation and the target (checkRecorded
// adds, after each decision, that it was recorded at all).
func (w *world) check(t *rapid.T) {
	target := w.statusTarget()
	for _, o := range w.owners {
		if prev := w.admitted[o.Key]; prev != "" && prev == target && !admits(o.Record, target) {
			t.Fatalf("%s was admitted to %s and no longer is: %s", o.Key, target, recordString(o.Record))
		}
		r := o.Record
		if w.failed[o.Key] && w.admitted[o.Key] == target && admits(r, target) && !isFailure(r) {
			// A Failed owner leaves Failed only when Ready is observed at its generation, at
			// the target, and is not False.
			if o.Running != target || o.Ready == nil || o.Ready.ObservedGeneration != o.Generation || o.Ready.Status == metav1.ConditionFalse {
				t.Fatalf("%s left its failure at %s without Ready observed at its generation and not False: %s, Ready %+v",
					o.Key, target, recordString(r), o.Ready)
			}
		}
		w.admitted[o.Key], w.failed[o.Key] = "", false
		if admits(r, target) {
			w.admitted[o.Key], w.failed[o.Key] = target, isFailure(r)
		}
	}
}

// checkRecorded runs after a decision: every failure it saw is in the owners' records. An owner's
// own reconcile does not move its record, so between its Ready=False and the next decision the
// record may still say Progressing or Succeeded; the decision must not leave it so.
func (w *world) checkRecorded(t *rapid.T) {
	target := w.statusTarget()
	for _, o := range w.owners {
		r := o.Record
		if r != nil && r.Revision == target && o.Running == target && o.Ready != nil && o.Ready.ObservedGeneration == o.Generation &&
			o.Ready.Status == metav1.ConditionFalse && (r.State == v1alpha1.RolloutProgressing || r.State == v1alpha1.RolloutSucceeded) {
			t.Fatalf("%s is Ready=False at its generation and the target %s, and the decision did not record it: %s", o.Key, target, recordString(r))
		}
	}
}

// converge makes every owner healthy at every revision and lifts a pause, then requires the
// rollout to complete within a bounded number of rounds (every owner reconciled, time moved to
// the next check, a decision), each of which makes progress or says when to look again.
func (w *world) converge(t *rapid.T) {
	for key := range w.health {
		for rev := range w.health[key] {
			w.health[key][rev] = metav1.ConditionTrue
		}
	}
	w.strategy.Paused = false
	t.Logf("every owner healthy, not paused")
	bound := 4*len(w.owners) + 8
	for round := range bound {
		for _, o := range w.owners {
			w.reconcile(t, o)
		}
		in := w.input()
		p := rollout.Decide(in)
		if p.Status.Complete && p.Status.TargetRevision == w.target {
			w.decide(t)
			for _, o := range w.owners {
				w.reconcile(t, o)
				if o.Running != w.target {
					t.Fatalf("the rollout is complete and %s runs %s, not %s", o.Key, o.Running, w.target)
				}
			}
			return
		}
		changed := !equality.Semantic.DeepEqual(in.Previous, &p.Status)
		for i, o := range w.owners {
			changed = changed || p.Owners[i].State != v1alpha1.RolloutToApply && !equality.Semantic.DeepEqual(o.Record, &p.Owners[i])
		}
		if !changed && p.Status.NextCheckTime == nil {
			t.Fatalf("round %d: every owner is healthy, nothing is paused, and the rollout neither moves nor says when to look again: %s; %s",
				round, p.Progressing.Message, recordsString(w.owners))
		}
		w.decide(t)
		if next := p.Status.NextCheckTime; next != nil && next.After(w.now) {
			w.now = next.Time
		}
	}
	t.Fatalf("every owner is healthy and the rollout did not complete in %d rounds: %s", bound, recordsString(w.owners))
}

// checkDecision checks one decision: the same plan whatever the owners' order, a fixed point, and
// no admission while failures among the owners already admitted stop the rollout.
func checkDecision(t *rapid.T, s v1alpha1.RolloutStrategy, in rollout.Input, p rollout.Plan) {
	shuffled := in
	shuffled.Owners = slices.Clone(in.Owners)
	perm := rand.New(rand.NewPCG(uint64(len(in.Owners)), 7)).Perm(len(in.Owners))
	for i, j := range perm {
		shuffled.Owners[j] = in.Owners[i]
	}
	q := rollout.Decide(shuffled)
	for i, j := range perm {
		if diff := cmp.Diff(p.Owners[i], q.Owners[j]); diff != "" {
			t.Fatalf("%s's record depends on the owners' order (-listed +shuffled):\n%s", in.Owners[i].Key, diff)
		}
	}
	p2, q2 := p, q
	p2.Owners, q2.Owners = nil, nil
	if diff := cmp.Diff(p2, q2); diff != "" {
		t.Fatalf("the plan depends on the owners' order (-listed +shuffled):\n%s", diff)
	}
	if diff := replayDiff(in, p); diff != "" {
		t.Fatalf("the plan is not a fixed point (-plan +replay):\n%s", diff)
	}
	// Skip is for an owner that runs the stable revision (or none yet) and is not Ready there.
	for i, o := range in.Owners {
		r := p.Owners[i]
		if admits(o.Record, in.Target) || r.State != v1alpha1.RolloutSkip {
			continue
		}
		runs := o.Running
		if o.Record != nil && o.Record.State != v1alpha1.RolloutToApply {
			runs = o.Record.Revision
		}
		if prev := in.Previous; runs != "" && prev != nil && runs != prev.StableRevision && !settled(in) {
			t.Fatalf("%s entered %s as Skip though it runs %s, not the stable revision %s", o.Key, in.Target, runs, prev.StableRevision)
		}
		if o.Ready != nil && o.Ready.ObservedGeneration == o.Generation && o.Ready.Status == metav1.ConditionTrue {
			t.Fatalf("%s entered %s as Skip though it is Ready", o.Key, in.Target)
		}
	}
	// Failures among the owners admitted before this decision, in their states after it.
	var groups []string
	for i, o := range in.Owners {
		if admits(o.Record, in.Target) {
			if r := p.Owners[i]; r.State == v1alpha1.RolloutFailed || r.State == v1alpha1.RolloutTimeOut {
				groups = append(groups, r.Group)
			}
		}
	}
	if reason := stopped(s, len(in.Owners), groups); reason != "" && !settled(in) {
		for i, o := range in.Owners {
			if r := p.Owners[i]; !admits(o.Record, in.Target) && r.State != v1alpha1.RolloutToApply {
				t.Fatalf("%s admitted while %s stops the rollout", o.Key, reason)
			}
		}
	}
}

// stopped is why failures (in the given groups, one per failure) stop admission, "" if they do
// not: a failure in a mandatory group; over maxFailures in a group for ProgressivePerGroup, or of
// all for Progressive; All has no budget.
func stopped(s v1alpha1.RolloutStrategy, n int, groups []string) string {
	perGroup := map[string]int{}
	for _, g := range groups {
		if slices.Contains(s.MandatoryGroups, g) {
			return "a failure in mandatory group " + g
		}
		perGroup[g]++
	}
	allowed, _ := intstr.GetScaledValueFromIntOrPercent(s.MaxFailures, n, true) // of every owner, rounded up; 0 unset
	switch s.Type {
	case v1alpha1.RolloutProgressive:
		if len(groups) > allowed {
			return fmt.Sprintf("%d failures over maxFailures %d", len(groups), allowed)
		}
	case v1alpha1.RolloutProgressivePerGroup:
		for _, g := range slices.Sorted(maps.Keys(perGroup)) {
			if perGroup[g] > allowed {
				return fmt.Sprintf("%d failures in group %q over maxFailures %d", perGroup[g], g, allowed)
			}
		}
	}
	return ""
}

// settled reports whether a decision has no rollout to gate: the target reached every owner
// already, or is the first the blueprint has (no status, and no owner has a record).
func settled(in rollout.Input) bool {
	if p := in.Previous; p != nil && p.TargetRevision != "" {
		return p.TargetRevision == in.Target && p.Complete
	}
	return !slices.ContainsFunc(in.Owners, func(o rollout.Owner) bool { return o.Record != nil })
}

func isFailure(r *v1alpha1.OwnerRolloutStatus) bool {
	return r.State == v1alpha1.RolloutFailed || r.State == v1alpha1.RolloutTimeOut
}

func admits(r *v1alpha1.OwnerRolloutStatus, revision string) bool {
	return r != nil && revision != "" && r.Revision == revision && r.State != v1alpha1.RolloutToApply
}

func recordString(r *v1alpha1.OwnerRolloutStatus) string {
	if r == nil {
		return "none"
	}
	return fmt.Sprintf("%s@%s", r.State, r.Revision)
}

func recordsString(owners []*rollout.Owner) string {
	s := ""
	for _, o := range owners {
		s += fmt.Sprintf("%s=%s ", o.Key, recordString(o.Record))
	}
	return s
}
