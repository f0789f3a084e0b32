// Package expr is Surveyor's one expression engine: every jsonpath and every CEL expression a
// user writes is parsed or compiled here, once, cached, and evaluated here. Health rules, condition
// rules, $(...)$ tags, output paths, deployment checks and selectors all use it, so one spelling
// means one thing everywhere.
//
// It is pure: it takes expressions and JSON-shaped values (an unstructured object's content) and
// returns values and errors. It imports no client and does no I/O.
//
// Paths:
//
//   - ParsePath parses a jsonpath with k8s.io/client-go/util/jsonpath after one normalisation of
//     the spellings users write (status.x, .status.x, {.status.x}, $.status.x,
//     labels['app.kubernetes.io/name'], filters such as conditions[?(@.type=="Ready")].status).
//     A path that does not parse is a *SyntaxError quoting it.
//   - Path.Find returns every value a path selects; finding none is an error wrapping ErrNotFound,
//     the one "not there (yet)" of paths.
//   - ValueString is the one string form of a value (In/NotIn, text in tags, messages), and
//     MatchField the one rule of matchFields requirements.
//
// CEL:
//
//   - CompileCEL compiles an expression over the one variable `object` and checks its type.
//   - Program.Eval, EvalBool and EvalString evaluate it against a Scope, the object prepared once
//     and the cost budget every expression about that object shares.
//
// The environment has the cel-go extensions for strings, lists, sets and two-variable
// comprehensions, optional types, the Kubernetes libraries (urls, regex, lists, quantity, ip,
// cidr, format, semver) and indexes(string), which parses a Job index set such as "1,3-5,7" into a
// list of ints.
//
// Parsed paths and compiled programs are cached by their text in bounded caches that evict the
// least recently used entry; PathParseCount and CELCompileCount show that steady state compiles
// nothing.
//
// Every CEL evaluation is bounded, whatever the expression and the object: its program is built
// with cel-go's runtime cost limit (CELCallCostLimit) and interrupt check, and runs with a context
// whose deadline is CELCallTimeLimit away. Going over either is ErrCostLimitExceeded, and the
// Scope's budget (CELObjectCostBudget by default) bounds all the expressions about one object.
//
// Memory is bounded before it is spent (guard.go). cel-go charges a call after it returns, so a
// call that allocates in proportion to an argument (lists.range, replace, join, format, string
// and list concatenation, flatten, a regular expression's program) is checked, from its
// arguments alone, before it runs, and refused with ErrCostLimitExceeded naming the limit it
// would go over: CELMaxListSize, CELMaxStringSize or CELMaxRegexSize. Compilation is bounded by
// the expression's size (CELMaxExpressionSize) and depth, and a jsonpath has at most one
// recursive descent.
//
// Evaluation is on the reconcile path of every resource, so the hot paths avoid the generic
// machinery where it is slow and keep it as the reference: jsonpath runs on a plan compiled from
// client-go's parse tree and falls back to client-go's evaluator (pathfast.go), CEL sees JSON values
// through a non-allocating adapter (celjson.go), list functions are priced without cel-go's
// per-evaluation tracker map (cost.go), and the deadline is a pooled timer rather than
// context.WithTimeout (deadline.go). Differential tests hold each shortcut to the reference.
//
// cel-go's cost tracking, which every evaluation runs with, makes an evaluation several times
// slower than an untracked one. What makes steady state cheap is that most evaluations need not
// run: a reconcile judges every resource it stamped, and most are as they were last time. A Scope
// over an object with a uid and resourceVersion (read from an API server) takes each program's
// result from a memo of recent object versions when it has one, and charges its cost as if it had
// run (memo.go). Only results that hold nothing of the object are remembered, and never one the
// clock stopped.
package expr
