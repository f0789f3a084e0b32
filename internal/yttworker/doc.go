// Package yttworker evaluates ytt templates for the controller in worker processes it can
// kill, so that a runaway template costs its own owner a failed stamp and nothing else
// (DESIGN §11, §12).
//
// ytt's starlark fork has no step budget and no cancellation, and starlark cannot bound
// memory: a template looping 10^9 times or building a 4 GiB list cannot be stopped inside
// the controller. A Pool therefore runs a few processes of the controller's own binary
// (os.Executable) in worker mode, each evaluating one template at a time with
// pkg/render/ytt under an address-space limit (RLIMIT_AS) of its size at start plus
// ytt.MemoryLimit. One past ytt.Timeout is killed; one that dies of its limit is reported as
// over it; either is replaced by a new process on next use.
//
// The hook: a binary that creates a Pool must call RunIfWorker first thing in main (the
// controller, cmd/surveyor) or in TestMain (the e2e suites that run the controller in
// process, through harness.Main). Started with EnvVar set, the process serves requests on
// stdin and stdout and exits; otherwise RunIfWorker returns at once.
//
// Requests and responses are JSON, each prefixed with its length (4 bytes, big endian).
package yttworker
