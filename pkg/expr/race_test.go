//go:build race

package expr_test

// raceDetector says the tests run under the race detector, whose instrumented build
// allocates more than the one that ships: about twice as much in two cases of
// TestCallsOverTheLimitsAreRefusedBeforeTheyAllocate (join 9.4 -> 17.3 MiB, format 8.1 ->
// 15.9 MiB), so allocation bounds are checked without it (make test's unit step).
const raceDetector = true
