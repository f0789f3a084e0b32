package rollout_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/rollout"
)

const (
	toApply     = v1alpha1.RolloutToApply
	progressing = v1alpha1.RolloutProgressing
	succeeded   = v1alpha1.RolloutSucceeded
	failed      = v1alpha1.RolloutFailed
	timeOut     = v1alpha1.RolloutTimeOut
	skip        = v1alpha1.RolloutSkip
)

type want struct {
	states      []v1alpha1.RolloutState // parallel to the owners
	progressing string                  // "status/reason" of RolloutProgressing
	degraded    string                  // "status/reason" of RolloutDegraded; FailuresWithinBudget when empty
	events      []string                // reasons, in order
	stable      string                  // r1 when empty
	current     string
	next        *metav1.Time
	failed      []string
	pinned      []string // PinnedRevision per owner, when given
	groups      []v1alpha1.GroupRolloutStatus
	message     string // a part of the RolloutProgressing message, when given
	degradedMsg string // the RolloutDegraded message, when given
}

func ppg(mod func(*v1alpha1.RolloutStrategy)) v1alpha1.RolloutStrategy {
	s := v1alpha1.RolloutStrategy{Type: v1alpha1.RolloutProgressivePerGroup}
	if mod != nil {
		mod(&s)
	}
	return s
}

// canaryThenRest is ProgressivePerGroup over groups canary and rest.
func canaryThenRest(mod func(*v1alpha1.RolloutStrategy)) v1alpha1.RolloutStrategy {
	return ppg(func(s *v1alpha1.RolloutStrategy) {
		s.Groups = []v1alpha1.RolloutGroup{group("canary", "canary"), group("rest", "rest")}
		if mod != nil {
			mod(s)
		}
	})
}

// inFlightAtR2 is an owner admitted to r2 at t0+admitted, stamped with r2, in group g.
func inFlightAtR2(g string, admitted time.Duration) func(*rollout.Owner) {
	return func(o *rollout.Owner) {
		record(progressing, "r2", g, admitted, admitted)(o)
		o.Running = "r2"
	}
}

func succeededAtR2(g string) func(*rollout.Owner) {
	return func(o *rollout.Owner) {
		record(succeeded, "r2", g, -20*time.Minute, -30*time.Minute)(o)
		o.Running = "r2"
	}
}

// failedAtR2 is an owner that moved itself to Failed at r2 a minute before t0.
func failedAtR2(g string) func(*rollout.Owner) {
	return func(o *rollout.Owner) {
		record(failed, "r2", g, -time.Minute, -10*time.Minute)(o)
		o.Running = "r2"
	}
}

func toApplyR2(g string) func(*rollout.Owner) {
	return record(toApply, "r2", g, -30*time.Minute, 0)
}

// failing is Ready=False since five minutes before t0.
var failing = ready(metav1.ConditionFalse, -5*time.Minute)

// soakingCanary is a canary admitted to r2 ten minutes before t0, first seen Ready there at
// t0+readyTime and Ready since t0+readySince, with a soak of five minutes, before an owner of the
// rest not yet admitted.
func soakingCanary(readyTime, readySince time.Duration) rollout.Input {
	return rollout.Input{Strategy: canaryThenRest(func(s *v1alpha1.RolloutStrategy) { s.MinSuccessTime = dur(5 * time.Minute) }),
		Previous: rolling("r1", "r2"), Owners: []rollout.Owner{
			owner("ns/a", label("tier", "canary"), inFlightAtR2("canary", -10*time.Minute), readyAt(readyTime), ready(metav1.ConditionTrue, readySince)),
			owner("ns/b", label("tier", "rest"), toApplyR2("rest")),
		}}
}

// readyAt records that a status first showed the owner Ready at its revision at t0+d.
func readyAt(d time.Duration) func(*rollout.Owner) {
	return func(o *rollout.Owner) { o.Record.ReadyTime = ptrAt(d) }
}

func doneOwners(keys ...string) []rollout.Owner {
	var out []rollout.Owner
	for _, k := range keys {
		out = append(out, owner(k, done))
	}
	return out
}

func TestDecide(t *testing.T) {
	rows := []struct {
		name string
		in   rollout.Input
		want want
	}{{
		name: "first sight: the target is stable and every owner is admitted at once, its health deciding its state",
		in: rollout.Input{Strategy: ppg(func(s *v1alpha1.RolloutStrategy) { s.OwnersPerGroup = intOr(1) }), Target: "r1", Owners: []rollout.Owner{
			owner("ns/a"),
			owner("ns/b", ready(metav1.ConditionFalse, -time.Hour)),
			owner("ns/c", running(""), noReady),
		}},
		want: want{states: []v1alpha1.RolloutState{succeeded, skip, skip}, progressing: "False/RolloutComplete"},
	}, {
		name: "ownersPerGroup 10% of 5 owners is a chunk of 1",
		in: rollout.Input{Strategy: ppg(func(s *v1alpha1.RolloutStrategy) { s.OwnersPerGroup = pct("10%") }),
			Previous: complete("r1"), Owners: doneOwners("ns/a", "ns/b", "ns/c", "ns/d", "ns/e")},
		want: want{states: []v1alpha1.RolloutState{progressing, toApply, toApply, toApply, toApply},
			progressing: "True/Progressing", events: []string{"RolloutStarted", "GroupStarted"},
			message: "0 of 5 owners succeeded at revision r2; owners in no group, chunk 1 of 5",
			groups:  []v1alpha1.GroupRolloutStatus{{Name: "", Counts: v1alpha1.RolloutCounts{ToApply: 4, Progressing: 1}}}},
	}, {
		name: "ownersPerGroup 34% of 3 owners is a chunk of 2",
		in: rollout.Input{Strategy: ppg(func(s *v1alpha1.RolloutStrategy) { s.OwnersPerGroup = pct("34%") }),
			Previous: complete("r1"), Owners: doneOwners("ns/a", "ns/b", "ns/c")},
		want: want{states: []v1alpha1.RolloutState{progressing, progressing, toApply},
			progressing: "True/Progressing", events: []string{"RolloutStarted", "GroupStarted"}, message: "chunk 1 of 2"},
	}, {
		name: "ownersPerGroup 5 of a group of 3 is the whole group",
		in: rollout.Input{Strategy: ppg(func(s *v1alpha1.RolloutStrategy) { s.OwnersPerGroup = intOr(5) }),
			Previous: complete("r1"), Owners: doneOwners("ns/a", "ns/b", "ns/c")},
		want: want{states: []v1alpha1.RolloutState{progressing, progressing, progressing},
			progressing: "True/Progressing", events: []string{"RolloutStarted", "GroupStarted"}, message: "chunk 1 of 1"},
	}, {
		name: "maxFailures 5 of a group of 3 tolerates the whole group",
		in: rollout.Input{Strategy: ppg(func(s *v1alpha1.RolloutStrategy) { s.MaxFailures = intOr(5) }),
			Previous: rolling("r1", "r2"), Owners: []rollout.Owner{
				owner("ns/a", inFlightAtR2("", -10*time.Minute), failing),
				owner("ns/b", inFlightAtR2("", -10*time.Minute), failing),
				owner("ns/c", inFlightAtR2("", -10*time.Minute), failing),
			}},
		want: want{states: []v1alpha1.RolloutState{failed, failed, failed}, progressing: "False/RolloutComplete",
			stable: "r2", events: []string{"RolloutSucceeded"}, failed: []string{"ns/a", "ns/b", "ns/c"}},
	}, {
		name: "maxFailures 34% of 3 is 2: a third failure breaches it",
		in: rollout.Input{Strategy: ppg(func(s *v1alpha1.RolloutStrategy) { s.MaxFailures = pct("34%") }),
			Previous: rolling("r1", "r2"), Owners: []rollout.Owner{
				owner("ns/a", inFlightAtR2("", -10*time.Minute), failing),
				owner("ns/b", inFlightAtR2("", -10*time.Minute), failing),
				owner("ns/c", inFlightAtR2("", -10*time.Minute), failing),
			}},
		want: want{states: []v1alpha1.RolloutState{failed, failed, failed}, progressing: "True/Progressing",
			degraded: "True/MaxFailuresBreached", events: []string{"MaxFailuresBreached"}, failed: []string{"ns/a", "ns/b", "ns/c"},
			degradedMsg: "owners in no group: 3 of 3 owners failed, more than maxFailures 2"},
	}, {
		name: "a breach the owners' records show but the blueprint's conditions do not is an event the first time the blueprint sees it",
		in: rollout.Input{Strategy: canaryThenRest(nil), Previous: rolling("r1", "r2"), Owners: []rollout.Owner{
			owner("ns/a", label("tier", "canary"), failedAtR2("canary"), failing),
			owner("ns/b", label("tier", "rest"), toApplyR2("rest")),
		}},
		want: want{states: []v1alpha1.RolloutState{failed, toApply}, progressing: "True/Progressing", current: "canary",
			degraded: "True/MaxFailuresBreached", events: []string{"MaxFailuresBreached"}, failed: []string{"ns/a"},
			degradedMsg: "group canary: 1 of 1 owners failed, more than maxFailures 0"},
	}, {
		name: "a breach the blueprint already reports is not an event again",
		in: rollout.Input{Strategy: canaryThenRest(nil), Previous: rolling("r1", "r2"),
			Degraded: &metav1.Condition{Type: v1alpha1.ConditionRolloutDegraded, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonMaxFailuresBreached},
			Owners: []rollout.Owner{
				owner("ns/a", label("tier", "canary"), failedAtR2("canary"), failing),
				owner("ns/b", label("tier", "rest"), toApplyR2("rest")),
			}},
		want: want{states: []v1alpha1.RolloutState{failed, toApply}, progressing: "True/Progressing", current: "canary",
			degraded: "True/MaxFailuresBreached", failed: []string{"ns/a"}},
	}, {
		name: "maxFailures 34% of 3 is 2: two failures are tolerated and the next group starts",
		in: rollout.Input{Strategy: ppg(func(s *v1alpha1.RolloutStrategy) {
			s.Groups = []v1alpha1.RolloutGroup{group("canary", "canary")}
			s.MaxFailures = pct("34%")
		}), Previous: rolling("r1", "r2"), Owners: []rollout.Owner{
			owner("ns/a", label("tier", "canary"), inFlightAtR2("canary", -10*time.Minute), failing),
			owner("ns/b", label("tier", "canary"), inFlightAtR2("canary", -10*time.Minute), failing),
			owner("ns/c", label("tier", "canary"), succeededAtR2("canary")),
			owner("ns/d", toApplyR2("")),
		}},
		want: want{states: []v1alpha1.RolloutState{failed, failed, succeeded, progressing}, progressing: "True/Progressing",
			events: []string{"GroupStarted"}, failed: []string{"ns/a", "ns/b"}, message: "owners in no group, chunk 1 of 1"},
	}, {
		name: "admissions the last status counted but that were never written: admitted again, GroupStarted not recorded twice",
		in: rollout.Input{Strategy: canaryThenRest(nil), Previous: startedIn(rolling("r1", "r2"), "canary", "rest"), Owners: []rollout.Owner{
			owner("ns/a", label("tier", "canary"), succeededAtR2("canary")),
			owner("ns/b", label("tier", "rest"), toApplyR2("rest")),
		}},
		want: want{states: []v1alpha1.RolloutState{succeeded, progressing}, progressing: "True/Progressing", current: "rest"},
	}, {
		name: "mandatory groups go first",
		in: rollout.Input{Strategy: ppg(func(s *v1alpha1.RolloutStrategy) {
			s.Groups = []v1alpha1.RolloutGroup{group("rest", "rest"), group("canary", "canary")}
			s.MandatoryGroups = []string{"canary"}
		}), Previous: complete("r1"), Owners: []rollout.Owner{
			owner("ns/a", label("tier", "rest"), done), owner("ns/b", label("tier", "canary"), done), owner("ns/c", done),
		}},
		want: want{states: []v1alpha1.RolloutState{toApply, progressing, toApply}, progressing: "True/Progressing",
			events: []string{"RolloutStarted", "GroupStarted"}, current: "canary", message: "group canary, chunk 1 of 1"},
	}, {
		name: "a failure in a mandatory group stops admission everywhere, whatever maxFailures",
		in: rollout.Input{Strategy: v1alpha1.RolloutStrategy{Type: v1alpha1.RolloutAll, MaxFailures: pct("100%"),
			Groups: []v1alpha1.RolloutGroup{group("canary", "canary")}, MandatoryGroups: []string{"canary"}},
			Previous: rolling("r1", "r2"), Owners: []rollout.Owner{
				owner("ns/a", toApplyR2("")),
				owner("ns/b", label("tier", "canary"), inFlightAtR2("canary", -10*time.Minute), failing),
				owner("ns/c", toApplyR2("")),
			}},
		want: want{states: []v1alpha1.RolloutState{toApply, failed, toApply}, progressing: "True/Progressing",
			degraded: "True/MandatoryGroupFailed", failed: []string{"ns/b"}, current: "",
			degradedMsg: "mandatory group canary: 1 of 1 owners failed, and none may"},
	}, {
		name: "All admits every other owner at once when the mandatory groups are final",
		in: rollout.Input{Strategy: v1alpha1.RolloutStrategy{Type: v1alpha1.RolloutAll,
			Groups: []v1alpha1.RolloutGroup{group("canary", "canary")}, MandatoryGroups: []string{"canary"}},
			Previous: rolling("r1", "r2"), Owners: []rollout.Owner{
				owner("ns/a", toApplyR2("")),
				owner("ns/b", label("tier", "canary"), succeededAtR2("canary")),
				owner("ns/c", toApplyR2("")),
			}},
		want: want{states: []v1alpha1.RolloutState{progressing, succeeded, progressing}, progressing: "True/Progressing",
			events: []string{"GroupStarted"}, message: "every owner in no mandatory group admitted"},
	}, {
		name: "ProgressivePerGroup: the next group waits while the earlier one soaks",
		in:   soakingCanary(-2*time.Minute, -2*time.Minute),
		want: want{states: []v1alpha1.RolloutState{progressing, toApply}, progressing: "True/Progressing",
			current: "canary", next: ptrAt(3 * time.Minute)},
	}, {
		name: "a soak counts from the first status Ready at the target, not from admission or an older Ready",
		in:   soakingCanary(-2*time.Minute, -time.Hour),
		want: want{states: []v1alpha1.RolloutState{progressing, toApply}, progressing: "True/Progressing",
			current: "canary", next: ptrAt(3 * time.Minute)},
	}, {
		name: "a Ready transition after the soak started (a flap between two looks) restarts it",
		in:   soakingCanary(-4*time.Minute, -time.Minute),
		want: want{states: []v1alpha1.RolloutState{progressing, toApply}, progressing: "True/Progressing",
			current: "canary", next: ptrAt(4 * time.Minute)},
	}, {
		name: "#3 an owner admitted long ago and restamped only now, Ready all along, starts its soak now",
		in: rollout.Input{Strategy: canaryThenRest(func(s *v1alpha1.RolloutStrategy) { s.MinSuccessTime = dur(5 * time.Minute) }),
			Previous: rolling("r1", "r2"), Owners: []rollout.Owner{
				owner("ns/a", label("tier", "canary"), inFlightAtR2("canary", -10*time.Minute)),
				owner("ns/b", label("tier", "rest"), toApplyR2("rest")),
			}},
		want: want{states: []v1alpha1.RolloutState{progressing, toApply}, progressing: "True/Progressing",
			current: "canary", next: ptrAt(5 * time.Minute)},
	}, {
		name: "ProgressivePerGroup: the soak over, the next group starts",
		in:   soakingCanary(-7*time.Minute, -7*time.Minute),
		want: want{states: []v1alpha1.RolloutState{succeeded, progressing}, progressing: "True/Progressing",
			events: []string{"GroupStarted"}, current: "rest", message: "group rest, chunk 1 of 1"},
	}, {
		name: "ProgressivePerGroup: a TimeOut over budget in an earlier group holds the later ones",
		in: rollout.Input{Strategy: canaryThenRest(func(s *v1alpha1.RolloutStrategy) { s.ProgressDeadline = "10m" }),
			Previous: rolling("r1", "r2"), Owners: []rollout.Owner{
				owner("ns/a", label("tier", "canary"), record(progressing, "r2", "canary", -10*time.Minute, -10*time.Minute)),
				owner("ns/b", label("tier", "rest"), toApplyR2("rest")),
			}},
		want: want{states: []v1alpha1.RolloutState{timeOut, toApply}, progressing: "True/Progressing",
			degraded: "True/MaxFailuresBreached", events: []string{"MaxFailuresBreached"}, failed: []string{"ns/a"},
			current: "canary", degradedMsg: "group canary: 1 of 1 owners failed, more than maxFailures 0"},
	}, {
		name: "ProgressivePerGroup: a TimeOut within budget lets the next group start",
		in: rollout.Input{Strategy: canaryThenRest(func(s *v1alpha1.RolloutStrategy) {
			s.ProgressDeadline = "10m"
			s.MaxFailures = intOr(1)
		}), Previous: rolling("r1", "r2"), Owners: []rollout.Owner{
			owner("ns/a", label("tier", "canary"), record(progressing, "r2", "canary", -10*time.Minute, -10*time.Minute)),
			owner("ns/b", label("tier", "rest"), toApplyR2("rest")),
		}},
		want: want{states: []v1alpha1.RolloutState{timeOut, progressing}, progressing: "True/Progressing",
			events: []string{"GroupStarted"}, failed: []string{"ns/a"}, current: "rest", next: ptrAt(10 * time.Minute)},
	}, {
		name: "Progressive: no more than maxConcurrency in flight",
		in: rollout.Input{Strategy: v1alpha1.RolloutStrategy{Type: v1alpha1.RolloutProgressive, MaxConcurrency: intOr(2)},
			Previous: complete("r1"), Owners: doneOwners("ns/a", "ns/b", "ns/c", "ns/d", "ns/e")},
		want: want{states: []v1alpha1.RolloutState{progressing, progressing, toApply, toApply, toApply},
			progressing: "True/Progressing", events: []string{"RolloutStarted", "GroupStarted"}, message: "2 in flight, maxConcurrency 2"},
	}, {
		name: "Progressive: a final owner frees its place (40% of 5 is 2)",
		in: rollout.Input{Strategy: v1alpha1.RolloutStrategy{Type: v1alpha1.RolloutProgressive, MaxConcurrency: pct("40%")},
			Previous: startedIn(rolling("r1", "r2"), ""), Owners: []rollout.Owner{
				owner("ns/a", succeededAtR2("")), owner("ns/b", record(progressing, "r2", "", -time.Minute, -time.Minute)),
				owner("ns/c", toApplyR2("")), owner("ns/d", toApplyR2("")), owner("ns/e", toApplyR2("")),
			}},
		want: want{states: []v1alpha1.RolloutState{succeeded, progressing, progressing, toApply, toApply},
			progressing: "True/Progressing", message: "2 in flight, maxConcurrency 2"},
	}, {
		name: "progressDeadline: an owner in flight that long is TimeOut",
		in: rollout.Input{Strategy: v1alpha1.RolloutStrategy{Type: v1alpha1.RolloutProgressive, ProgressDeadline: "15m"},
			Previous: rolling("r1", "r2"), Owners: []rollout.Owner{owner("ns/a", inFlightAtR2("", -15*time.Minute), staleReady)}},
		want: want{states: []v1alpha1.RolloutState{timeOut}, progressing: "True/Progressing", degraded: "True/MaxFailuresBreached",
			events: []string{"MaxFailuresBreached"}, failed: []string{"ns/a"}, degradedMsg: "1 of 1 owners failed, more than maxFailures 0"},
	}, {
		name: "#4 All has no failure budget: a failed owner does not stop it, and it completes with the failure counted",
		in: rollout.Input{Strategy: v1alpha1.RolloutStrategy{Type: v1alpha1.RolloutAll}, Previous: rolling("r1", "r2"), Owners: []rollout.Owner{
			owner("ns/a", inFlightAtR2("", -5*time.Minute), failing), owner("ns/b", succeededAtR2("")),
		}},
		want: want{states: []v1alpha1.RolloutState{failed, succeeded}, progressing: "False/RolloutComplete", stable: "r2",
			events: []string{"RolloutSucceeded"}, failed: []string{"ns/a"},
			message: "revision r2 reached all 2 owners: 1 succeeded, 0 in progress, 1 failed, 0 skipped"},
	}, {
		name: "#7 a record without an admission time times out from its last transition, and says when",
		in: rollout.Input{Strategy: v1alpha1.RolloutStrategy{Type: v1alpha1.RolloutProgressive, ProgressDeadline: "15m", MaxFailures: intOr(2)},
			Previous: rolling("r1", "r2"), Owners: []rollout.Owner{
				owner("ns/a", inFlightAtR2("", -20*time.Minute), staleReady, noAdmittedTime),
				owner("ns/b", inFlightAtR2("", -10*time.Minute), staleReady, noAdmittedTime),
			}},
		want: want{states: []v1alpha1.RolloutState{timeOut, progressing}, progressing: "True/Progressing", failed: []string{"ns/a"},
			next: ptrAt(5 * time.Minute)},
	}, {
		name: "#7 progressDeadline None is no deadline",
		in: rollout.Input{Strategy: v1alpha1.RolloutStrategy{Type: v1alpha1.RolloutProgressive, ProgressDeadline: v1alpha1.ProgressDeadlineNone},
			Previous: rolling("r1", "r2"), Owners: []rollout.Owner{owner("ns/a", inFlightAtR2("", -20*time.Hour), staleReady)}},
		want: want{states: []v1alpha1.RolloutState{progressing}, progressing: "True/Progressing"},
	}, {
		name: "progressDeadline: until then, the deadline is the next check",
		in: rollout.Input{Strategy: v1alpha1.RolloutStrategy{Type: v1alpha1.RolloutAll, ProgressDeadline: "15m"},
			Previous: rolling("r1", "r2"), Owners: []rollout.Owner{owner("ns/a", inFlightAtR2("", -10*time.Minute), staleReady)}},
		want: want{states: []v1alpha1.RolloutState{progressing}, progressing: "True/Progressing", next: ptrAt(5 * time.Minute)},
	}, {
		name: "a flap returns a Succeeded owner to Progressing and restarts its soak and its deadline",
		in: rollout.Input{Strategy: v1alpha1.RolloutStrategy{Type: v1alpha1.RolloutAll, ProgressDeadline: "15m", MinSuccessTime: dur(5 * time.Minute)},
			Previous: rolling("r1", "r2"), Owners: []rollout.Owner{owner("ns/a", succeededAtR2(""), ready(metav1.ConditionUnknown, -time.Minute))}},
		want: want{states: []v1alpha1.RolloutState{progressing}, progressing: "True/Progressing", next: ptrAt(15 * time.Minute)},
	}, {
		name: "a Succeeded owner Ready=False at its generation and the target is Failed",
		in: rollout.Input{Strategy: v1alpha1.RolloutStrategy{Type: v1alpha1.RolloutProgressive},
			Previous: rolling("r1", "r2"), Owners: []rollout.Owner{owner("ns/a", succeededAtR2(""), ready(metav1.ConditionFalse, -time.Minute))}},
		want: want{states: []v1alpha1.RolloutState{failed}, progressing: "True/Progressing", failed: []string{"ns/a"},
			degraded: "True/MaxFailuresBreached", events: []string{"MaxFailuresBreached"}},
	}, {
		name: "a Failed owner no longer Ready=False is Progressing again, and soaks from then",
		in: rollout.Input{Strategy: v1alpha1.RolloutStrategy{Type: v1alpha1.RolloutAll, MinSuccessTime: dur(5 * time.Minute)},
			Previous: rolling("r1", "r2"), Owners: []rollout.Owner{
				owner("ns/a", running("r2"), record(failed, "r2", "", -5*time.Minute, -10*time.Minute), ready(metav1.ConditionTrue, -time.Minute)),
			}},
		want: want{states: []v1alpha1.RolloutState{progressing}, progressing: "True/Progressing", next: ptrAt(5 * time.Minute)},
	}, {
		name: "a TimeOut owner Ready at the target recovers and completes the rollout",
		in: rollout.Input{Strategy: v1alpha1.RolloutStrategy{Type: v1alpha1.RolloutAll, ProgressDeadline: "15m"},
			Previous: rolling("r1", "r2"), Owners: []rollout.Owner{
				owner("ns/a", running("r2"), record(timeOut, "r2", "", -5*time.Minute, -20*time.Minute), ready(metav1.ConditionTrue, -time.Minute)),
			}},
		want: want{states: []v1alpha1.RolloutState{succeeded}, progressing: "False/RolloutComplete", stable: "r2",
			events: []string{"RolloutSucceeded"}},
	}, {
		name: "Ready=False at the target and the generation is a failure, however old: no times are compared",
		in: rollout.Input{Strategy: v1alpha1.RolloutStrategy{Type: v1alpha1.RolloutProgressive, MaxFailures: intOr(1)}, Previous: rolling("r1", "r2"),
			Owners: []rollout.Owner{owner("ns/a", inFlightAtR2("", -5*time.Minute), ready(metav1.ConditionFalse, -10*time.Minute))}},
		want: want{states: []v1alpha1.RolloutState{failed}, progressing: "False/RolloutComplete", stable: "r2",
			events: []string{"RolloutSucceeded"}, failed: []string{"ns/a"}},
	}, {
		name: "Ready=False while not yet stamped from the target is no evidence",
		in: rollout.Input{Strategy: v1alpha1.RolloutStrategy{Type: v1alpha1.RolloutProgressive}, Previous: rolling("r1", "r2"),
			Owners: []rollout.Owner{owner("ns/a", inFlightAtR2("", -5*time.Minute), running("r1"), failing)}},
		want: want{states: []v1alpha1.RolloutState{progressing}, progressing: "True/Progressing"},
	}, {
		name: "supersede: the new target restarts from the first group; the others keep what they run",
		in: rollout.Input{Strategy: canaryThenRest(nil), Target: "r3", Previous: rolling("r1", "r2"), Owners: []rollout.Owner{
			owner("ns/a", label("tier", "rest"), inFlightAtR2("rest", -time.Minute)),
			owner("ns/b", label("tier", "canary"), succeededAtR2("canary")),
		}},
		want: want{states: []v1alpha1.RolloutState{toApply, progressing}, progressing: "True/Superseded",
			events: []string{"RolloutSuperseded", "RolloutStarted", "GroupStarted"}, current: "canary",
			pinned: []string{"r2", "r3"}, message: "revision r3 supersedes revision r2"},
	}, {
		name: "revert: an owner already at the target is admitted at once, without re-stamping",
		in: rollout.Input{Strategy: canaryThenRest(nil), Target: "r1", Previous: rolling("r1", "r2"), Owners: []rollout.Owner{
			owner("ns/a", label("tier", "rest"), toApplyR2("rest")),
			owner("ns/b", label("tier", "canary"), succeededAtR2("canary")),
		}},
		want: want{states: []v1alpha1.RolloutState{succeeded, progressing}, progressing: "True/Superseded",
			events: []string{"RolloutSuperseded", "RolloutStarted", "GroupStarted"}, current: "canary", pinned: []string{"r1", "r1"}},
	}, {
		name: "an owner added to a finished group is admitted at once; one added to a group not reached runs the stable revision",
		in: rollout.Input{Strategy: ppg(func(s *v1alpha1.RolloutStrategy) {
			s.Groups = []v1alpha1.RolloutGroup{group("canary", "canary"), group("rest", "rest"), group("late", "late")}
		}), Previous: startedIn(rolling("r1", "r2"), "canary", "rest"), Owners: []rollout.Owner{
			owner("ns/a", label("tier", "canary"), succeededAtR2("canary")),
			owner("ns/b", label("tier", "rest"), record(progressing, "r2", "rest", -time.Minute, -time.Minute)),
			owner("ns/c", label("tier", "canary"), running(""), noReady),
			owner("ns/d", label("tier", "late"), running(""), noReady),
		}},
		want: want{states: []v1alpha1.RolloutState{succeeded, progressing, skip, toApply}, progressing: "True/Progressing",
			current: "rest", pinned: []string{"r2", "r2", "r2", "r1"}, groups: []v1alpha1.GroupRolloutStatus{
				{Name: "canary", Counts: v1alpha1.RolloutCounts{Succeeded: 1, Skip: 1}},
				{Name: "rest", Counts: v1alpha1.RolloutCounts{Progressing: 1}},
				{Name: "late", Counts: v1alpha1.RolloutCounts{ToApply: 1}},
			}},
	}, {
		name: "a deleted owner leaves every count: its failure no longer holds the next group",
		in: rollout.Input{Strategy: canaryThenRest(nil), Previous: &v1alpha1.BlueprintRolloutStatus{
			StableRevision: "r1", TargetRevision: "r2", CurrentGroup: "canary", FailedOwners: []string{"ns/gone"},
			Counts: v1alpha1.RolloutCounts{Succeeded: 1, Failed: 1, ToApply: 1},
		}, Owners: []rollout.Owner{
			owner("ns/a", label("tier", "canary"), succeededAtR2("canary")),
			owner("ns/b", label("tier", "rest"), toApplyR2("rest")),
		}},
		want: want{states: []v1alpha1.RolloutState{succeeded, progressing}, progressing: "True/Progressing",
			events: []string{"GroupStarted"}, current: "rest", groups: []v1alpha1.GroupRolloutStatus{
				{Name: "canary", Counts: v1alpha1.RolloutCounts{Succeeded: 1}},
				{Name: "rest", Counts: v1alpha1.RolloutCounts{Progressing: 1}},
			}},
	}, {
		name: "paused: no new admission, admitted owners go on",
		in: rollout.Input{Strategy: canaryThenRest(func(s *v1alpha1.RolloutStrategy) { s.Paused = true }),
			Previous: rolling("r1", "r2"), Owners: []rollout.Owner{
				owner("ns/a", label("tier", "canary"), inFlightAtR2("canary", -5*time.Minute)),
				owner("ns/b", label("tier", "rest"), toApplyR2("rest")),
			}},
		want: want{states: []v1alpha1.RolloutState{succeeded, toApply}, progressing: "True/Paused", current: "rest",
			message: "paused; 1 of 2 owners succeeded at revision r2; group rest, chunk 1 of 1"},
	}, {
		name: "an owner already failing before the change is Skip, and does not block the next chunk",
		in: rollout.Input{Strategy: ppg(func(s *v1alpha1.RolloutStrategy) { s.OwnersPerGroup = intOr(1) }),
			Previous: complete("r1"), Owners: []rollout.Owner{owner("ns/a", done, failing), owner("ns/b", done)}},
		want: want{states: []v1alpha1.RolloutState{skip, progressing}, progressing: "True/Progressing",
			events: []string{"RolloutStarted", "GroupStarted"}, message: "chunk 2 of 2"},
	}, {
		name: "a stale owner is not admitted, not Skip: its group waits until its status is written again",
		in: rollout.Input{Strategy: ppg(func(s *v1alpha1.RolloutStrategy) { s.OwnersPerGroup = intOr(1) }),
			Previous: complete("r1"), Owners: []rollout.Owner{owner("ns/a", done, stale), owner("ns/b", done)}},
		want: want{states: []v1alpha1.RolloutState{toApply, toApply}, progressing: "True/Progressing",
			events: []string{"RolloutStarted"}, message: "chunk 1 of 2"},
	}, {
		name: "Progressive: a stale owner holds the owners after it, keeping name order",
		in: rollout.Input{Strategy: v1alpha1.RolloutStrategy{Type: v1alpha1.RolloutProgressive, MaxConcurrency: intOr(2)},
			Previous: rolling("r1", "r2"), Owners: []rollout.Owner{
				owner("ns/a", inFlightAtR2("", -time.Minute), ready(metav1.ConditionUnknown, -time.Minute)),
				owner("ns/b", toApplyR2(""), stale), owner("ns/c", toApplyR2("")),
			}},
		want: want{states: []v1alpha1.RolloutState{progressing, toApply, toApply}, progressing: "True/Progressing"},
	}, {
		name: "a stale owner keeps its state: a blueprint edit is not a flap",
		in: rollout.Input{Strategy: canaryThenRest(func(s *v1alpha1.RolloutStrategy) { s.MinSuccessTime = dur(5 * time.Minute) }),
			Previous: rolling("r1", "r2"), Owners: []rollout.Owner{
				owner("ns/a", label("tier", "canary"), succeededAtR2("canary"), stale),
				owner("ns/b", label("tier", "rest"), inFlightAtR2("rest", -time.Minute), stale),
			}},
		want: want{states: []v1alpha1.RolloutState{succeeded, progressing}, progressing: "True/Progressing", current: "rest"},
	}, {
		name: "Ready observed at an older generation is no evidence: admitted as Progressing, never Skip",
		in: rollout.Input{Strategy: v1alpha1.RolloutStrategy{Type: v1alpha1.RolloutAll}, Previous: complete("r1"),
			Owners: []rollout.Owner{owner("ns/a", done, failing, staleReady)}},
		want: want{states: []v1alpha1.RolloutState{progressing}, progressing: "True/Progressing",
			events: []string{"RolloutStarted", "GroupStarted"}},
	}, {
		name: "an invalid selector selects no owner and the condition says so",
		in: rollout.Input{Strategy: ppg(func(s *v1alpha1.RolloutStrategy) {
			s.Groups = []v1alpha1.RolloutGroup{{Name: "bad", Selector: metav1.LabelSelector{
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: "Bogus"}}}}}
		}), Previous: complete("r1"), Owners: []rollout.Owner{owner("ns/a", label("tier", "x"), done)}},
		want: want{states: []v1alpha1.RolloutState{progressing}, progressing: "True/Progressing",
			events: []string{"RolloutStarted", "GroupStarted"}, message: `group bad selects no owner: invalid selector: "Bogus" is not a valid label selector operator`},
	}, {
		name: "the last owner succeeding completes the rollout",
		in: rollout.Input{Strategy: canaryThenRest(nil), Previous: rolling("r1", "r2"), Owners: []rollout.Owner{
			owner("ns/a", label("tier", "canary"), succeededAtR2("canary")),
			owner("ns/b", label("tier", "rest"), inFlightAtR2("rest", -2*time.Minute), ready(metav1.ConditionTrue, -time.Minute)),
		}},
		want: want{states: []v1alpha1.RolloutState{succeeded, succeeded}, progressing: "False/RolloutComplete", stable: "r2",
			events: []string{"RolloutSucceeded"}, message: "revision r2 reached all 2 owners: 2 succeeded, 0 in progress, 0 failed, 0 skipped"},
	}, {
		name: "#1 supersede: a mandatory canary Failed at r2 enters r3 as Progressing, never Skip, and holds the rest",
		in: rollout.Input{Strategy: canaryThenRest(func(s *v1alpha1.RolloutStrategy) { s.MandatoryGroups = []string{"canary"} }),
			Target: "r3", Previous: currentIn(rolling("r1", "r2"), "canary"), Owners: []rollout.Owner{
				owner("ns/a", label("tier", "canary"), failedAtR2("canary"), failing),
				owner("ns/b", label("tier", "rest"), done), owner("ns/c", label("tier", "rest"), done),
			}},
		want: want{states: []v1alpha1.RolloutState{progressing, toApply, toApply}, progressing: "True/Superseded",
			events: []string{"RolloutSuperseded", "RolloutStarted", "GroupStarted"}, current: "canary",
			pinned: []string{"r3", "r1", "r1"}, message: "revision r3 supersedes revision r2"},
	}, {
		name: "#1 supersede: a chunk in flight at r2, still Ready=Unknown, enters r3 as Progressing and holds the next group",
		in: rollout.Input{Strategy: canaryThenRest(nil), Target: "r3", Previous: currentIn(rolling("r1", "r2"), "canary"), Owners: []rollout.Owner{
			owner("ns/a", label("tier", "canary"), inFlightAtR2("canary", -5*time.Second), ready(metav1.ConditionUnknown, -5*time.Second)),
			owner("ns/b", label("tier", "canary"), inFlightAtR2("canary", -5*time.Second), running("r1")),
			owner("ns/c", label("tier", "rest"), done),
		}},
		want: want{states: []v1alpha1.RolloutState{progressing, progressing, toApply}, progressing: "True/Superseded",
			events: []string{"RolloutSuperseded", "RolloutStarted", "GroupStarted"}, current: "canary"},
	}, {
		name: "#2 an edit does not erase a failure: Ready not yet observed at the new generation keeps it Failed",
		in: rollout.Input{Strategy: canaryThenRest(func(s *v1alpha1.RolloutStrategy) { s.MandatoryGroups = []string{"canary"} }),
			Previous: currentIn(rolling("r1", "r2"), "canary"), Owners: []rollout.Owner{
				owner("ns/a", label("tier", "canary"), failedAtR2("canary"), failing, staleReady),
				owner("ns/b", label("tier", "rest"), done),
			}},
		want: want{states: []v1alpha1.RolloutState{failed, toApply}, progressing: "True/Progressing", current: "canary",
			degraded: "True/MandatoryGroupFailed", failed: []string{"ns/a"},
			degradedMsg: "mandatory group canary: 1 of 1 owners failed, and none may"},
	}, {
		name: "#2 Ready=False observed again after an edit is a failure, though older than the record",
		in: rollout.Input{Strategy: canaryThenRest(func(s *v1alpha1.RolloutStrategy) { s.MandatoryGroups = []string{"canary"} }),
			Previous: currentIn(rolling("r1", "r2"), "canary"), Owners: []rollout.Owner{
				owner("ns/a", label("tier", "canary"), inFlightAtR2("canary", -time.Minute), ready(metav1.ConditionFalse, -time.Hour), generation(2)),
				owner("ns/b", label("tier", "rest"), done),
			}},
		want: want{states: []v1alpha1.RolloutState{failed, toApply}, progressing: "True/Progressing", current: "canary",
			degraded: "True/MandatoryGroupFailed", failed: []string{"ns/a"}},
	}, {
		name: "#2 a Failed owner observed Ready=Unknown at its generation is Progressing again",
		in: rollout.Input{Strategy: canaryThenRest(func(s *v1alpha1.RolloutStrategy) { s.MandatoryGroups = []string{"canary"} }),
			Previous: currentIn(rolling("r1", "r2"), "canary"), Owners: []rollout.Owner{
				owner("ns/a", label("tier", "canary"), failedAtR2("canary"), ready(metav1.ConditionUnknown, -time.Second)),
				owner("ns/b", label("tier", "rest"), done),
			}},
		want: want{states: []v1alpha1.RolloutState{progressing, toApply}, progressing: "True/Progressing", current: "canary"},
	}, {
		name: "#5 an owner new in a finished group is admitted at once and holds nothing: the next group starts",
		in: rollout.Input{Strategy: ppg(func(s *v1alpha1.RolloutStrategy) {
			s.Groups = []v1alpha1.RolloutGroup{group("canary", "canary"), group("rest", "rest"), group("late", "late")}
			s.MinSuccessTime = dur(5 * time.Minute)
		}), Previous: currentIn(startedIn(rolling("r1", "r2"), "canary", "rest"), "rest"), Owners: []rollout.Owner{
			owner("ns/a", label("tier", "canary"), succeededAtR2("canary")),
			owner("ns/b", label("tier", "rest"), succeededAtR2("rest")),
			owner("ns/c", label("tier", "canary")),
			owner("ns/d", label("tier", "late"), done),
		}},
		want: want{states: []v1alpha1.RolloutState{succeeded, succeeded, progressing, progressing}, progressing: "True/Progressing",
			events: []string{"GroupStarted"}, current: "late", message: "group late, chunk 1 of 1"},
	}, {
		name: "#6 ownersPerGroup 25% is of every owner: 8 owners in two groups of 4 go in chunks of 2",
		in: rollout.Input{Strategy: ppg(func(s *v1alpha1.RolloutStrategy) {
			s.Groups = []v1alpha1.RolloutGroup{group("a", "a"), group("b", "b")}
			s.OwnersPerGroup = pct("25%")
		}), Previous: complete("r1"), Owners: []rollout.Owner{
			owner("ns/a1", label("tier", "a"), done), owner("ns/a2", label("tier", "a"), done),
			owner("ns/a3", label("tier", "a"), done), owner("ns/a4", label("tier", "a"), done),
			owner("ns/b1", label("tier", "b"), done), owner("ns/b2", label("tier", "b"), done),
			owner("ns/b3", label("tier", "b"), done), owner("ns/b4", label("tier", "b"), done),
		}},
		want: want{states: []v1alpha1.RolloutState{progressing, progressing, toApply, toApply, toApply, toApply, toApply, toApply},
			progressing: "True/Progressing", events: []string{"RolloutStarted", "GroupStarted"}, current: "a", message: "group a, chunk 1 of 2"},
	}, {
		name: "#7 a blueprint restored without its status resumes from the owners' records, not as first sight",
		in: rollout.Input{Strategy: canaryThenRest(func(s *v1alpha1.RolloutStrategy) { s.MinSuccessTime = dur(5 * time.Minute) }),
			Owners: []rollout.Owner{
				owner("ns/a", label("tier", "canary"), inFlightAtR2("canary", -time.Minute), readyAt(-time.Minute)),
				owner("ns/b", label("tier", "rest"), done), owner("ns/c", label("tier", "rest"), done),
			}},
		want: want{states: []v1alpha1.RolloutState{progressing, toApply, toApply}, progressing: "True/Progressing", current: "canary",
			pinned: []string{"r2", "r1", "r1"}, next: ptrAt(4 * time.Minute)},
	}, {
		name: "#7 restored without its status once the canary succeeded: the rest is admitted by its turn",
		in: rollout.Input{Strategy: canaryThenRest(func(s *v1alpha1.RolloutStrategy) { s.OwnersPerGroup = intOr(1) }),
			Owners: []rollout.Owner{
				owner("ns/a", label("tier", "canary"), succeededAtR2("canary")),
				owner("ns/b", label("tier", "rest"), done), owner("ns/c", label("tier", "rest"), done),
			}},
		want: want{states: []v1alpha1.RolloutState{succeeded, progressing, toApply}, progressing: "True/Progressing", current: "rest",
			events: []string{"GroupStarted"}, message: "group rest, chunk 1 of 2"},
	}, {
		name: "a new target with no owner is complete at once",
		in:   rollout.Input{Strategy: canaryThenRest(nil), Previous: complete("r1")},
		want: want{states: []v1alpha1.RolloutState{}, progressing: "False/RolloutComplete", stable: "r2",
			events: []string{"RolloutStarted", "RolloutSucceeded"}},
	}}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			in := row.in
			if in.Target == "" {
				in.Target = "r2"
			}
			in.Now = t0
			p := rollout.Decide(in)
			check(t, in, p, row.want)
			replay(t, in, p)
		})
	}
}

func check(t *testing.T, in rollout.Input, p rollout.Plan, w want) {
	t.Helper()
	states := []v1alpha1.RolloutState{}
	for _, rec := range p.Owners {
		states = append(states, rec.State)
	}
	if diff := cmp.Diff(w.states, states); diff != "" {
		t.Errorf("states (-want +got):\n%s", diff)
	}
	if got := string(p.Progressing.Status) + "/" + p.Progressing.Reason; got != w.progressing {
		t.Errorf("RolloutProgressing = %s (%s), want %s", got, p.Progressing.Message, w.progressing)
	}
	if w.degraded == "" {
		w.degraded = "False/FailuresWithinBudget"
	}
	if got := string(p.Degraded.Status) + "/" + p.Degraded.Reason; got != w.degraded {
		t.Errorf("RolloutDegraded = %s (%s), want %s", got, p.Degraded.Message, w.degraded)
	}
	if p.Progressing.Type != v1alpha1.ConditionRolloutProgressing || p.Degraded.Type != v1alpha1.ConditionRolloutDegraded {
		t.Errorf("condition types = %s, %s", p.Progressing.Type, p.Degraded.Type)
	}
	var events []string
	for _, e := range p.Events {
		events = append(events, e.Reason)
		if e.Warning != (e.Reason == v1alpha1.EventMaxFailuresBreached) {
			t.Errorf("event %s: warning = %v", e.Reason, e.Warning)
		}
	}
	if diff := cmp.Diff(w.events, events); diff != "" {
		t.Errorf("events (-want +got):\n%s\n%v", diff, p.Events)
	}
	if w.stable == "" {
		w.stable = "r1"
	}
	if p.Status.StableRevision != w.stable || p.Status.TargetRevision != in.Target {
		t.Errorf("stable, target = %s, %s; want %s, %s", p.Status.StableRevision, p.Status.TargetRevision, w.stable, in.Target)
	}
	if p.Status.CurrentGroup != w.current {
		t.Errorf("currentGroup = %q, want %q", p.Status.CurrentGroup, w.current)
	}
	if diff := cmp.Diff(w.next, p.Status.NextCheckTime); diff != "" {
		t.Errorf("nextCheckTime (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(w.failed, p.Status.FailedOwners); diff != "" {
		t.Errorf("failedOwners (-want +got):\n%s", diff)
	}
	if w.pinned != nil {
		var pinned []string
		for i, o := range in.Owners {
			pinned = append(pinned, rollout.PinnedRevision(&p.Owners[i], o.Running, &p.Status))
		}
		if diff := cmp.Diff(w.pinned, pinned); diff != "" {
			t.Errorf("pinned revisions (-want +got):\n%s", diff)
		}
	}
	if w.groups != nil {
		if diff := cmp.Diff(w.groups, p.Status.Groups); diff != "" {
			t.Errorf("groups (-want +got):\n%s", diff)
		}
	}
	if !strings.Contains(p.Progressing.Message, w.message) {
		t.Errorf("RolloutProgressing message %q does not say %q", p.Progressing.Message, w.message)
	}
	if w.degradedMsg != "" && p.Degraded.Message != w.degradedMsg {
		t.Errorf("RolloutDegraded message = %q, want %q", p.Degraded.Message, w.degradedMsg)
	}
	var sum v1alpha1.RolloutCounts
	for _, g := range p.Status.Groups {
		sum.ToApply += g.Counts.ToApply
		sum.Progressing += g.Counts.Progressing
		sum.Succeeded += g.Counts.Succeeded
		sum.Failed += g.Counts.Failed
		sum.TimeOut += g.Counts.TimeOut
		sum.Skip += g.Counts.Skip
	}
	if sum != p.Status.Counts {
		t.Errorf("counts %+v are not the sum of the groups' %+v", p.Status.Counts, sum)
	}
}

// replay feeds the plan back as the next input at the same time, as a restarted controller would
// read it from the API: nothing may change and no event may be recorded.
func replay(t *testing.T, in rollout.Input, p rollout.Plan) {
	t.Helper()
	if diff := replayDiff(in, p); diff != "" {
		t.Errorf("replaying the plan changed it (-first +replay):\n%s", diff)
	}
}

// replayDiff is how the plan fed back as the next input at the same time differs from it; only
// the reason Superseded belongs to the decision that saw the new target.
func replayDiff(in rollout.Input, p rollout.Plan) string {
	again := rollout.Decide(next(in, p))
	if p.Progressing.Reason == v1alpha1.ReasonRolloutSuperseded {
		p.Progressing.Reason, p.Progressing.Message = again.Progressing.Reason, again.Progressing.Message
	}
	p.Events = nil
	return cmp.Diff(p, again)
}

// A strategy edit that drops the group an owner was admitted in rewrites no record: the record
// keeps its group, and the owner counts where its labels put it now.
func TestStrategyEditRewritesNoRecord(t *testing.T) {
	in := rollout.Input{Strategy: v1alpha1.RolloutStrategy{Type: v1alpha1.RolloutAll}, Target: "r2", Now: t0,
		Previous: complete("r2"), Owners: []rollout.Owner{owner("ns/a", label("tier", "canary"), succeededAtR2("canary"))}}
	p := rollout.Decide(in)
	if diff := cmp.Diff(*in.Owners[0].Record, p.Owners[0]); diff != "" {
		t.Errorf("the record changed (-before +after):\n%s", diff)
	}
	if want := []v1alpha1.GroupRolloutStatus{{Name: "", Counts: v1alpha1.RolloutCounts{Succeeded: 1}}}; !cmp.Equal(want, p.Status.Groups) {
		t.Errorf("groups %+v, want %+v", p.Status.Groups, want)
	}
}
