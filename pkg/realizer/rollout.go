package realizer

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/render"
	"github.com/surveyor-dev/surveyor/pkg/rollout"
)

// keepRevisions is how many of a blueprint's newest revisions are kept even when no owner is
// pinned to them, so that a revert finds its revision still there.
const keepRevisions = 10

// rolloutDecision is one decision of a blueprint's rollout and the owners it was made over.
type rolloutDecision struct {
	rollout.Plan
	owners []v1alpha1.Owner
}

// decideRollout runs a blueprint's rollout (DESIGN §9) up to its decision: it snapshots the
// blueprint into its current revision (when every template it references exists; otherwise the
// last target stays) and decides with pkg/rollout which owners are admitted to it. The caller
// writes the plan's status, conditions and events, then carries it out (carryOut). It returns
// nil when there is no revision to roll out yet.
func (r *BlueprintReconciler) decideRollout(ctx context.Context, obj v1alpha1.Blueprint, bp *render.Blueprint, templates []v1alpha1.Template, complete bool, now time.Time) (*rolloutDecision, error) {
	var target string
	if bp.Status.Rollout != nil {
		target = bp.Status.Rollout.TargetRevision
	}
	if complete {
		rev, err := newRevision(r.kind, obj, templates)
		if err != nil {
			return nil, err
		}
		var untrusted *untrustedRevisionError
		switch err := ensureRevision(ctx, r.client, r.kind, obj, rev); {
		case errors.As(err, &untrusted):
			// Someone else's object holds the new revision's name: it is not adopted, and
			// the last target stays, as while a template is missing. Recorded, not
			// returned: a retry cannot fix it, only deleting that object can.
			r.recorder.Event(obj, corev1.EventTypeWarning, v1alpha1.ReasonRevisionNotTrusted, untrusted.Error())
		case err != nil:
			return nil, err
		default:
			target = rev.Name
		}
	}
	if target == "" {
		return nil, nil
	}
	owners, err := r.owners(ctx, bp)
	if err != nil {
		return nil, err
	}
	in := rollout.Input{Strategy: *bp.Strategy, Target: target, Previous: bp.Status.Rollout, Now: now,
		Degraded: meta.FindStatusCondition(bp.Status.Conditions, v1alpha1.ConditionRolloutDegraded)}
	for _, o := range owners {
		in.Owners = append(in.Owners, rolloutOwner(r.kind.Owner(), o, o.GetOwnerStatus()))
	}
	return &rolloutDecision{Plan: rollout.Decide(in), owners: owners}, nil
}

// pinWriters is how many owners' records carryOut writes at once.
const pinWriters = 16

// carryOut pins the decision's owners through their status and deletes the revisions nothing
// needs. It runs once the blueprint's status holds the decision, so a decision made from a stale
// copy of the blueprint, which loses at that write, changes no owner. This reconciler is the only
// writer of an owner's record (admissions and transitions alike; the owner reconciler carries it
// as it read it), so deadlines and soaks are measured from times it recorded itself (DESIGN §9,
// One clock). A ToApply record is never written: an owner not admitted keeps what it has (DESIGN
// §9, Cost). The records of owners already admitted are written first, admissions after, each
// group of writes side by side: an admission rests on the transitions before it (an earlier
// group's owners Succeeded), so none is written once one of those lost to a newer copy of its
// owner (errStaleOwner); the next decision, from that copy, finishes the job. An admission that
// loses to a newer copy of its own owner does not stop the others.
func (r *BlueprintReconciler) carryOut(ctx context.Context, bp *render.Blueprint, d *rolloutDecision) error {
	transitions, admissions := writes(d.owners, d.Owners)
	if err := r.pinAll(ctx, d.owners, d.Owners, transitions); err != nil {
		return err
	}
	if err := r.pinAll(ctx, d.owners, d.Owners, admissions); err != nil && !errors.Is(err, errStaleOwner) {
		return err
	}
	return r.collectRevisions(ctx, bp, d.owners, d.Status)
}

// forgetRollout clears the records of a blueprint's owners once its rolloutStrategy is removed
// (its status still has a rollout): they would otherwise pin the owners again, to revisions they
// no longer run, if a strategy came back. Like every record, they are cleared by this reconciler
// only; it runs before the blueprint's status drops its rollout, so a failed write is tried again.
func (r *BlueprintReconciler) forgetRollout(ctx context.Context, bp *render.Blueprint) error {
	owners, err := r.owners(ctx, bp)
	if err != nil {
		return err
	}
	var recorded []int
	for i, o := range owners {
		if o.GetOwnerStatus().Rollout != nil {
			recorded = append(recorded, i)
		}
	}
	return r.pinAll(ctx, owners, make([]v1alpha1.OwnerRolloutStatus, len(owners)), recorded)
}

// writes are the indexes of the owners whose records a decision writes: transitions of owners
// already admitted to the record's revision, and admissions. A ToApply record is never written,
// nor one that did not change (pin skips it).
func writes(owners []v1alpha1.Owner, records []v1alpha1.OwnerRolloutStatus) (transitions, admissions []int) {
	for i, o := range owners {
		switch rec := records[i]; {
		case rec.State == v1alpha1.RolloutToApply:
		case admitted(o.GetOwnerStatus().Rollout, rec.Revision):
			transitions = append(transitions, i)
		default:
			admissions = append(admissions, i)
		}
	}
	return transitions, admissions
}

// pinAll writes the records of owners at indexes (one without a state clears it), pinWriters at a
// time, and returns the first error; errStaleOwner only once every other write was tried.
func (r *BlueprintReconciler) pinAll(ctx context.Context, owners []v1alpha1.Owner, records []v1alpha1.OwnerRolloutStatus, indexes []int) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(pinWriters)
	var stale atomic.Bool
	for _, i := range indexes {
		g.Go(func() error {
			var record *v1alpha1.OwnerRolloutStatus
			if records[i].State != "" {
				record = &records[i]
			}
			err := r.pin(ctx, owners[i], record)
			if errors.Is(err, errStaleOwner) {
				stale.Store(true)
				return nil
			}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if stale.Load() {
		return errStaleOwner
	}
	return nil
}

// admitted reports whether record admits its owner to revision.
func admitted(record *v1alpha1.OwnerRolloutStatus, revision string) bool {
	return record != nil && record.Revision == revision && record.State != v1alpha1.RolloutToApply
}

// owners are the owners realized with the blueprint, sorted by namespace/name. They are the
// cache's own objects, not copies (a blueprint may have thousands, and every owner's change
// decides again): nothing may change them.
func (r *BlueprintReconciler) owners(ctx context.Context, bp *render.Blueprint) ([]v1alpha1.Owner, error) {
	ok := r.kind.Owner()
	list := ok.NewList()
	if err := r.client.List(ctx, list, client.MatchingFields{indexBlueprint: bp.Name}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	var owners []v1alpha1.Owner
	_ = meta.EachListItem(list, func(o runtime.Object) error {
		owner := o.(v1alpha1.Owner)
		if ref := owner.GetBlueprintRef(); ref != nil && ref.Kind == bp.Kind.Kind && owner.GetDeletionTimestamp().IsZero() {
			owners = append(owners, owner)
		}
		return nil
	})
	slices.SortFunc(owners, func(a, b v1alpha1.Owner) int {
		return cmp.Or(cmp.Compare(a.GetNamespace(), b.GetNamespace()), cmp.Compare(a.GetName(), b.GetName()))
	})
	return owners, nil
}

// errStaleOwner stops a decision made from a copy of an owner older than the API's: the newer
// copy's event re-queues the blueprint, which decides again from it.
var errStaleOwner = errors.New("an owner changed since the decision was made")

// pin writes an owner's rollout record (nil: none) when it changed, and nothing else of its
// status: the rest is as the cache holds it, and the resourceVersion it carries makes the write
// lose to a newer copy. The owner reconciler stamps from the revision the record pins
// (rollout.PinnedRevision) and keeps the record as it is. A deleted owner is left out; a
// conflict is errStaleOwner.
func (r *BlueprintReconciler) pin(ctx context.Context, owner v1alpha1.Owner, record *v1alpha1.OwnerRolloutStatus) error {
	if equality.Semantic.DeepEqual(owner.GetOwnerStatus().Rollout, record) {
		return nil
	}
	changed := owner.DeepCopyObject().(v1alpha1.Owner)
	changed.GetOwnerStatus().Rollout = record
	err := r.records.update(ctx, changed)
	if apierrors.IsConflict(err) {
		return errStaleOwner
	}
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("recording the rollout of %s %s/%s: %w", owner.GetObjectKind().GroupVersionKind().Kind, owner.GetNamespace(), owner.GetName(), err)
	}
	return nil
}

// collectRevisions deletes the blueprint's revisions that no owner runs or is pinned to, that
// are neither the stable nor the target revision, and that are older than the newest
// keepRevisions.
func (r *BlueprintReconciler) collectRevisions(ctx context.Context, bp *render.Blueprint, owners []v1alpha1.Owner, status v1alpha1.BlueprintRolloutStatus) error {
	list := &v1alpha1.BlueprintRevisionList{}
	if err := r.client.List(ctx, list, client.MatchingLabels{v1alpha1.LabelBlueprintKind: bp.Kind.Kind, v1alpha1.LabelBlueprintName: bp.Name}); err != nil {
		return err
	}
	needed := map[string]bool{status.StableRevision: true, status.TargetRevision: true}
	for _, o := range owners {
		st := o.GetOwnerStatus()
		needed[st.BlueprintRevision] = true
		if st.Rollout != nil {
			needed[st.Rollout.Revision] = true
		}
	}
	for _, rev := range unneededRevisions(list.Items, needed) {
		if err := r.client.Delete(ctx, &rev, client.Preconditions{UID: &rev.UID}); client.IgnoreNotFound(err) != nil && !apierrors.IsConflict(err) {
			return fmt.Errorf("deleting revision %s: %w", rev.Name, err)
		}
	}
	return nil
}

// unneededRevisions are the revisions, among a blueprint's, that are not needed and not among
// the newest keepRevisions.
func unneededRevisions(revs []v1alpha1.BlueprintRevision, needed map[string]bool) []v1alpha1.BlueprintRevision {
	if len(revs) <= keepRevisions {
		return nil
	}
	revs = slices.Clone(revs)
	slices.SortFunc(revs, func(a, b v1alpha1.BlueprintRevision) int {
		return cmp.Or(b.CreationTimestamp.Compare(a.CreationTimestamp.Time), cmp.Compare(b.Name, a.Name))
	})
	var out []v1alpha1.BlueprintRevision
	for _, rev := range revs[keepRevisions:] {
		if !needed[rev.Name] {
			out = append(out, rev)
		}
	}
	return out
}

// blueprintSeen lets an owner reconciler see a blueprint's change once the blueprint's
// status shows it, and not for its rollout's progress: owners read the blueprint's spec
// together with its conditions, stable and target revisions. A new spec alone re-queues
// nothing: an owner that looked before the blueprint reconciler had checked it would say
// SupplyChainNotReconciled (Ready Unknown) and write its status twice, and each rollout
// step would re-queue every owner of the blueprint. The status write that follows a new
// spec carries its observedGeneration, and that re-queues the owners. A change to the
// blueprint's labels or annotations still reaches its owners, so touching a blueprint
// remains a way to make them all look again.
func blueprintSeen(bk *v1alpha1.BlueprintKind) predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		o, n := e.ObjectOld, e.ObjectNew
		if !maps.Equal(o.GetLabels(), n.GetLabels()) || !maps.Equal(o.GetAnnotations(), n.GetAnnotations()) {
			return true
		}
		return !equality.Semantic.DeepEqual(ownerVisibleStatus(render.BlueprintOf(e.ObjectOld.(v1alpha1.Blueprint)).Status), ownerVisibleStatus(render.BlueprintOf(e.ObjectNew.(v1alpha1.Blueprint)).Status))
	}}
}

// ownerVisibleStatus is the part of a blueprint's status owners read.
func ownerVisibleStatus(st *v1alpha1.BlueprintStatus) v1alpha1.BlueprintStatus {
	out := v1alpha1.BlueprintStatus{ObservedGeneration: st.ObservedGeneration}
	for _, c := range st.Conditions {
		if c.Type != v1alpha1.ConditionRolloutProgressing && c.Type != v1alpha1.ConditionRolloutDegraded {
			out.Conditions = append(out.Conditions, c)
		}
	}
	if st.Rollout != nil {
		out.Rollout = &v1alpha1.BlueprintRolloutStatus{StableRevision: st.Rollout.StableRevision, TargetRevision: st.Rollout.TargetRevision}
	}
	return out
}

// nextCheck is how long until the plan wants another look, zero for none.
func nextCheck(plan *rolloutDecision, now time.Time) time.Duration {
	if plan == nil || plan.Status.NextCheckTime == nil {
		return 0
	}
	return max(plan.Status.NextCheckTime.Sub(now), time.Second)
}

// rolloutConditions are the plan's conditions at the blueprint's generation.
func rolloutConditions(plan *rolloutDecision, generation int64) []metav1.Condition {
	if plan == nil {
		return nil
	}
	out := []metav1.Condition{plan.Progressing, plan.Degraded}
	for i := range out {
		out[i].ObservedGeneration = generation
	}
	return out
}
