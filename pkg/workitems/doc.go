// Package workitems judges completable work: it turns a template's conditionRules and a stamped
// object into the resource's rule conditions, such as Complete, and aggregates them for the owner
// (DESIGN §5, seeds 000 and 001).
//
// It is pure: it takes rules, objects and conditions and returns conditions. It imports no client
// and does no I/O; the realizer decides when to read, apply and write status.
//
//   - Evaluate turns the rules and the stamped object into one condition per condition type, in
//     rule order. CEL rules run in package expr's one CEL environment and Scope, so health and
//     condition rules of one object share its cost budget and program cache.
//   - JobVerdict and PodVerdict are the built-in completion verdicts behind WellKnownCompletions,
//     following KEP-3998 for Jobs: SuccessCriteriaMet and FailureTarget decide before Complete and
//     Failed, and only status "True" counts.
//   - IsComplete and Freeze keep a verdict from flipping: once a resource is Complete=True it stays
//     so, whatever its object later looks like.
//   - OwnerConditions is the owner's AND over its resources, one condition per rule condition type.
//   - Validate checks rules before use, naming the field of each problem; the realizer reports it as
//     the template's Ready=False InvalidConditionRule.
//
// No condition built here carries a LastTransitionTime or an ObservedGeneration; the caller stamps
// the generation and merges conditions into the status, and the merge decides when a transition
// happened.
package workitems
