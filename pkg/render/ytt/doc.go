// Package ytt evaluates ytt templates (spec.ytt, DESIGN §11) in process, with carvel.dev/ytt
// as a library, exactly as Cartographer runs the ytt binary: the template is the file
// stdin.yml, each top-level key of the templating context is one data value given as
// --data-value-yaml key=<JSON> (so a string "5" stays a string), and the output and the
// error text are what the binary prints on stdout and stderr.
//
// A Template is compiled once and evaluated many times. It does what ytt's workspace does
// for a single file, with ytt's own parser, compiler, modules and overlays, but without the
// workspace: the workspace parses and compiles the template again at each evaluation, and
// links ytt's schema package, whose text/template keeps every exported method in the
// binary. FuzzYTT checks every input against ytt's own pipeline (reference_test.go).
//
// Eval is unbounded: ytt's starlark fork has no step budget and no cancellation, and
// starlark cannot bound memory, so a runaway template cannot be stopped in process.
// InProcess adds a deadline (the evaluation is abandoned, not stopped) and serves the
// offline tools, `kubectl carto render`, `lint` and `test`, whose process ends anyway. The
// controller evaluates in worker processes it can kill (internal/yttworker), which run Eval.
package ytt
