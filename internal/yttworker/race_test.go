//go:build race

package yttworker_test

// raceDetector says the tests run under the race detector. Its runtime maps shadow memory
// that the workers' memory limit leaves no room for ("too many address space collisions for
// -race mode"), and it slows evaluation until the time limit comes first, so the memory
// limit is tested without it (make test's unit step).
const raceDetector = true
