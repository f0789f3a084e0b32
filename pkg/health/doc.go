// Package health judges stamped objects and aggregates the verdicts for their owner (DESIGN §4).
//
// It is pure: it takes objects, rules and conditions and returns conditions. It imports no client
// and does no I/O, so the reconciler decides when to read and write and this package decides what
// the status says.
//
//   - Evaluate turns a stamped object and its template's health rule into the resource's Healthy
//     condition, for every form of the rule (none, alwaysHealthy, singleConditionType, multiMatch
//     with matchConditions, matchFields and matchCEL), including the generation check of seed 003.
//   - Validate checks a rule's jsonpaths and CEL expressions, naming the field of each problem.
//     RuleOf gives a template's rule and the field it is written in (Cartographer's healthRule or
//     healthyConditionRule), and Validate's and Evaluate's messages start with that field.
//   - ResourcesHealthy, ResourceReady, OwnerReady and Available are the owner aggregations, pure
//     constructors in the style of Cluster API's conditions package.
//
// Paths and CEL expressions are parsed, compiled, cached and evaluated by package expr, the engine
// selectors, stamping and condition rules use too, so a path or a value means the same thing in a
// health rule as everywhere else. CEL expressions see one variable, `object`, the stamped object;
// their evaluation is bounded by a per-call cost limit and by the per-object budget of the
// expr.Scope in Input.
//
// No condition built here carries a LastTransitionTime; the caller merges conditions into the
// status, and the merge decides when a transition happened.
package health
