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
//   - ResourcesHealthy, ResourceReady, OwnerReady and Available are the owner aggregations, pure
//     constructors in the style of Cluster API's conditions package.
//   - ParsePath and CompileCEL are the caches of parsed jsonpath expressions and compiled CEL
//     programs, keyed by expression text and shared with the rest of Surveyor (outputs, selectors,
//     condition rules). PathParseCount and CELCompileCount show that steady state compiles nothing.
//
// CEL expressions see one variable, `object`, the stamped object as a map. The environment has the
// cel-go extensions for strings, lists, sets and two-variable comprehensions, optional types, the
// Kubernetes libraries (urls, regex, lists, quantity, ip, cidr, format, semver) and indexes(string),
// which parses a Job index set such as "1,3-5,7" into a list of ints. Evaluation is bounded by a
// per-call cost limit and by a per-object budget carried in a Scope.
//
// Evaluation is on the reconcile path of every resource, so the hot paths avoid the generic
// machinery where it is slow and keep it as the reference: jsonpath runs on a plan compiled from
// client-go's parse tree and falls back to client-go's evaluator (pathfast.go), CEL sees JSON values
// through a non-allocating adapter (celjson.go), and expressions whose worst-case cost on the object
// is known skip cel-go's runtime cost tracker (celcost.go). Differential tests hold each shortcut to
// the reference.
//
// No condition built here carries a LastTransitionTime; the caller merges conditions into the
// status, and the merge decides when a transition happened.
package health
