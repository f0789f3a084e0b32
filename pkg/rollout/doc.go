// Package rollout decides, for one blueprint with a rolloutStrategy, which owners are admitted to
// its target revision and where each of them stands (DESIGN §9, seed 004).
//
// It is a pure planner: Decide takes the strategy, the target revision, the blueprint's
// status.rollout as last written, every owner's labels, realized revision, rollout record and Ready
// condition, and the time, and returns every owner's record, the blueprint's status.rollout, its two
// rollout conditions and the events of this decision. It imports no client, reads no clock and
// keeps no state, so a restarted controller that reads the same objects makes the same decision, and
// feeding a Plan back as the next Input with the same time changes nothing and records no event.
//
// PinnedRevision says which revision an owner is stamped from, given the records Decide wrote.
//
// The planner works at the API's time precision (whole seconds), so a decision replayed from what
// the reconciler wrote and read back is the same decision.
package rollout
