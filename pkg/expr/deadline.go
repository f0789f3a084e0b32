package expr

import (
	"context"
	"sync"
	"time"
)

// deadline is the context one CEL evaluation runs with: its Done channel closes when its timer
// fires, at the evaluation's time limit.
//
// context.WithTimeout would do, but it costs about a microsecond and four allocations per call (a
// cancel tree, a timer, a channel), as much as a typical evaluation itself. A deadline is taken
// from a pool and keeps its channel and timer across evaluations: as long as its timer has not
// fired, which is always but when an evaluation ran out of time, stopping the timer leaves it as
// good as new. One whose timer fired has a closed channel and is dropped.
type deadline struct {
	at    time.Time
	done  chan struct{}
	timer *time.Timer
}

var _ context.Context = (*deadline)(nil)

var deadlines = sync.Pool{New: func() any {
	d := &deadline{done: make(chan struct{})}
	d.timer = time.AfterFunc(time.Hour, func() { close(d.done) })
	d.timer.Stop()
	return d
}}

// startDeadline returns a context whose Done channel closes after limit. Release it when the
// evaluation is over.
func startDeadline(limit time.Duration) *deadline {
	if limit <= 0 {
		// No time at all (a test's limit): done before the evaluation starts, rather than once
		// the timer's goroutine gets to run, which a busy machine can put off for as long as
		// a cheap evaluation takes.
		d := &deadline{at: time.Now(), done: make(chan struct{})}
		close(d.done)
		return d
	}
	d := deadlines.Get().(*deadline)
	d.at = time.Now().Add(limit)
	d.timer.Reset(limit)
	return d
}

// release stops the timer and returns the deadline to the pool, unless the timer fired.
func (d *deadline) release() {
	if d.timer != nil && d.timer.Stop() {
		deadlines.Put(d)
	}
}

// Deadline returns when the evaluation's time is up.
func (d *deadline) Deadline() (time.Time, bool) { return d.at, true }

// Done returns the channel that closes when the evaluation's time is up.
func (d *deadline) Done() <-chan struct{} { return d.done }

// Err returns context.DeadlineExceeded once the time is up, and nil before.
func (d *deadline) Err() error {
	select {
	case <-d.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

// Value returns nil: an evaluation's context carries no values.
func (d *deadline) Value(any) any { return nil }
