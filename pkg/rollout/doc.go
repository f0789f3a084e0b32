// Package rollout decides, for one blueprint with a rolloutStrategy, which owners are admitted to
// its target revision and where each of them stands (DESIGN §9, seed 004).
//
// It is a pure planner: Decide takes the strategy, the target revision, the blueprint's
// status.rollout as last written, every owner's labels, realized revision, rollout record and Ready
// condition, and the time, and returns every owner's record, the blueprint's status.rollout, its two
// rollout conditions and the events of this decision. It imports no client, reads no clock and
// keeps no state, so a restarted controller that reads the same objects makes the same decision, and
// feeding a Plan back as the next Input with the same time changes nothing and records no event.
// Within one call, transitions and admissions repeat until neither changes anything, which is what
// makes a plan such a fixed point.
//
// PinnedRevision says which revision an owner is stamped from, given the records Decide wrote.
//
// Where DESIGN §9 is silent, the planner decides so:
//   - progressDeadline applies to an owner that is not Ready at the target; one that is Ready there
//     and soaking does not time out, so an owner leaving TimeOut cannot fall back into it at once.
//   - For ProgressivePerGroup, the owners in no group have a maxFailures budget, like every
//     named group.
//   - An owner whose Ready lags its generation when the rollout reaches it is admitted as
//     Progressing, not Skip: Skip needs evidence that it is not Ready at the stable revision.
//   - The soak counts from the record's readyTime, which the first decision that sees the owner
//     Ready at the target and its generation sets: a time the blueprint reconciler recorded
//     itself (DESIGN §9, One clock), like every time in a record.
//   - The rollout's place is status.rollout.currentGroup: the stages before it are finished, an
//     owner new there is admitted at once, and one that flaps there holds nothing. While
//     failures stop the rollout, it stays where it stopped.
//   - A blueprint without status whose owners have records resumes: its stable revision is the
//     one most owners not admitted to the target run.
//   - Records are written by the blueprint's reconciler alone, from the plan (admissions and
//     transitions alike); the owner's reconciler reads its record and carries it unchanged.
//   - An owner that already runs the target (a revert to a revision it never left) is admitted at
//     once rather than at its turn: admitting it changes nothing it runs. Pause still holds it.
//   - A rollout held by failures is not complete even when every owner is final: it has not
//     reached every owner within budget, so the stable revision stays.
//   - GroupStarted is recorded when the rollout reaches a group none of whose owners the blueprint's
//     status counted as admitted; owners admitted early because they already run the target count
//     as admitted. Like every event, it is read from the blueprint's status as last written
//     (Previous, Degraded), never from the owners' records, which owners also move themselves.
//   - status.rollout.groups lists groups in rollout order: mandatory groups first.
//   - An owner whose status was written while its blueprint's newest spec was not yet reconciled
//     (Owner.Stale) is neither admitted nor moved: its Ready=Unknown says only that the blueprint
//     changed. Otherwise every edit of a blueprint would restart every soak, and a rollout that
//     starts with the edit would make Skip of every owner.
//   - The reason Superseded belongs to the decision that sees the new target; the next one says
//     Progressing.
//
// The planner works at the API's time precision (whole seconds), so a decision replayed from what
// the reconciler wrote and read back is the same decision.
package rollout
