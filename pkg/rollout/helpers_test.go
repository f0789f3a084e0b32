package rollout_test

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/rollout"
)

// t0 is the time of every test decision unless a row says otherwise; offsets are from it.
var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func at(d time.Duration) metav1.Time { return metav1.NewTime(t0.Add(d)) }

func ptrAt(d time.Duration) *metav1.Time { t := at(d); return &t }

func intOr(v int) *intstr.IntOrString { x := intstr.FromInt32(int32(v)); return &x }

func pct(s string) *intstr.IntOrString { x := intstr.FromString(s); return &x }

func dur(d time.Duration) *metav1.Duration { return &metav1.Duration{Duration: d} }

// owner is Ready=True at generation 1 since an hour before t0, runs r1 and has no record, unless
// options say otherwise.
func owner(key string, opts ...func(*rollout.Owner)) rollout.Owner {
	o := rollout.Owner{Key: key, Running: "r1", Generation: 1}
	ready(metav1.ConditionTrue, -time.Hour)(&o)
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

func label(k, v string) func(*rollout.Owner) {
	return func(o *rollout.Owner) { o.Labels = map[string]string{k: v} }
}

func running(rev string) func(*rollout.Owner) {
	return func(o *rollout.Owner) { o.Running = rev }
}

// ready sets the Ready condition, observed at the owner's generation, changed at t0+since.
func ready(s metav1.ConditionStatus, since time.Duration) func(*rollout.Owner) {
	return func(o *rollout.Owner) {
		o.Ready = &metav1.Condition{Type: v1alpha1.ConditionReady, Status: s, ObservedGeneration: 1, LastTransitionTime: at(since)}
	}
}

func noReady(o *rollout.Owner) { o.Ready = nil }

// staleReady: Ready was observed at an older generation, so it does not count.
func staleReady(o *rollout.Owner) { o.Generation = 2 }

// stale: the owner's status was written before its blueprint's newest spec was reconciled.
func stale(o *rollout.Owner) {
	o.Stale = true
	o.Ready.Status = metav1.ConditionUnknown
}

// record sets status.rollout: a state at a revision since t0+since, admitted at t0+admitted.
func record(state v1alpha1.RolloutState, rev, group string, since, admitted time.Duration) func(*rollout.Owner) {
	return func(o *rollout.Owner) {
		o.Record = &v1alpha1.OwnerRolloutStatus{Revision: rev, State: state, Group: group, LastTransitionTime: at(since)}
		if state != v1alpha1.RolloutToApply {
			o.Record.AdmittedTime = ptrAt(admitted)
		}
	}
}

// generation sets metadata.generation and the generation Ready was observed at.
func generation(g int64) func(*rollout.Owner) {
	return func(o *rollout.Owner) { o.Generation, o.Ready.ObservedGeneration = g, g }
}

// currentIn is prev as written while the rollout admitted group.
func currentIn(prev *v1alpha1.BlueprintRolloutStatus, group string) *v1alpha1.BlueprintRolloutStatus {
	prev.CurrentGroup = group
	return prev
}

func noAdmittedTime(o *rollout.Owner) { o.Record.AdmittedTime = nil }

// done is an owner the previous rollout (to r1) finished with.
func done(o *rollout.Owner) {
	record(v1alpha1.RolloutSucceeded, "r1", "", -2*time.Hour, -3*time.Hour)(o)
}

// complete is a blueprint whose last rollout finished at rev.
func complete(rev string) *v1alpha1.BlueprintRolloutStatus {
	return &v1alpha1.BlueprintRolloutStatus{StableRevision: rev, TargetRevision: rev, Complete: true}
}

// rolling is a blueprint rolling out target over stable.
func rolling(stable, target string) *v1alpha1.BlueprintRolloutStatus {
	return &v1alpha1.BlueprintRolloutStatus{StableRevision: stable, TargetRevision: target}
}

func group(name, tier string) v1alpha1.RolloutGroup {
	return v1alpha1.RolloutGroup{Name: name, Selector: metav1.LabelSelector{MatchLabels: map[string]string{"tier": tier}}}
}

// next feeds a plan back as the input of the next decision, as the reconciler does through the API.
func next(in rollout.Input, p rollout.Plan) rollout.Input {
	out := in
	out.Owners = make([]rollout.Owner, len(in.Owners))
	for i, o := range in.Owners {
		if rec := p.Owners[i]; rec.State != v1alpha1.RolloutToApply {
			o.Record = &rec // a ToApply record is never written
		}
		out.Owners[i] = o
	}
	status, degraded := p.Status, p.Degraded
	out.Previous, out.Degraded = &status, &degraded
	return out
}

// startedIn is prev as written once the rollout had admitted an owner in each of groups.
func startedIn(prev *v1alpha1.BlueprintRolloutStatus, groups ...string) *v1alpha1.BlueprintRolloutStatus {
	for _, g := range groups {
		prev.Groups = append(prev.Groups, v1alpha1.GroupRolloutStatus{Name: g, Counts: v1alpha1.RolloutCounts{Progressing: 1}})
	}
	return prev
}
