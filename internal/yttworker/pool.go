package yttworker

import (
	"bufio"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"k8s.io/utils/clock"
	"k8s.io/utils/lru"

	"github.com/surveyor-dev/surveyor/pkg/render/ytt"
)

// Options configure a Pool; zero values take the defaults.
type Options struct {
	// Size is how many workers evaluate at once: 2.
	Size int
	// Timeout is one evaluation's time limit: ytt.Timeout.
	Timeout time.Duration
	// Memory is one worker's memory budget in bytes: ytt.MemoryLimit.
	Memory int64
	// Executable is the binary to run as a worker: this process's own (os.Executable).
	Executable string
	// Clock times the evaluations against Timeout: the real clock. A test that gives a
	// fake one decides when an evaluation runs out of time, whatever the machine's speed.
	// (A new worker's start is timed by the real clock: that limit guards against a worker
	// that hangs, and is not a template's.)
	Clock clock.WithDelayedExecution
}

// memoSize is how many results the Pool remembers, and memoMaxOutput the largest output it
// keeps: at most 16 MiB in all.
const (
	memoSize      = 1024
	memoMaxOutput = 16 << 10
)

// startTimeout is how long a new worker may take to say it is ready.
const startTimeout = 10 * time.Second

// Pool evaluates ytt templates in worker processes (see the package doc). It implements
// render.YTT and is safe for concurrent use; an evaluation waits for a free worker.
type Pool struct {
	opts Options
	// slots hold the idle workers; nil is a slot whose worker is to be started.
	slots chan *worker
	// memo remembers the result of a template for its data values: ytt is deterministic, and
	// an owner is stamped again on every reconcile with mostly the same values.
	memo *lru.Cache

	mu      sync.Mutex
	closed  bool
	running map[*worker]struct{}
}

// New makes a Pool; its workers start on first use.
func New(opts Options) (*Pool, error) {
	if opts.Size <= 0 {
		opts.Size = 2
	}
	if opts.Timeout <= 0 {
		opts.Timeout = ytt.Timeout
	}
	if opts.Memory <= 0 {
		opts.Memory = ytt.MemoryLimit
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.Executable == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("finding this binary to run ytt workers: %w", err)
		}
		opts.Executable = exe
	}
	p := &Pool{opts: opts, slots: make(chan *worker, opts.Size), memo: lru.New(memoSize), running: map[*worker]struct{}{}}
	for range opts.Size {
		p.slots <- nil
	}
	return p, nil
}

// result is a remembered evaluation.
type result struct {
	out []byte
	err error
}

// Eval implements render.YTT: it evaluates source with values in a worker, within the
// Pool's time and memory limits. Past either the error is a *ytt.Error naming the limit.
// The output may be shared with other callers: it is not to be modified.
func (p *Pool) Eval(source string, values map[string]any) ([]byte, error) {
	flags, err := ytt.DataValues(values)
	if err != nil {
		return nil, err
	}
	key := memoKey(source, flags)
	if r, ok := p.memo.Get(key); ok {
		evaluations.WithLabelValues("remembered").Inc()
		return r.(result).out, r.(result).err
	}
	req := request{Source: []byte(source), Flags: make([][]byte, len(flags))}
	for i, f := range flags {
		req.Flags[i] = []byte(f)
	}
	start := time.Now()
	out, deterministic, err := p.eval(req)
	observe(start, err)
	if deterministic && len(out) <= memoMaxOutput {
		p.memo.Add(key, result{out, err})
	}
	return out, err
}

// memoKey is the SHA-256 of a template and its data values.
func memoKey(source string, flags []string) [sha256.Size]byte {
	h := sha256.New()
	for _, s := range append([]string{source}, flags...) {
		fmt.Fprintf(h, "%d:%s", len(s), s)
	}
	var key [sha256.Size]byte
	h.Sum(key[:0])
	return key
}

// eval runs one request in a free worker. deterministic says whether the result is ytt's
// own (an output or a ytt error), which the same request would get again; a limit, a crash
// or a worker that cannot start may not recur.
func (p *Pool) eval(req request) (out []byte, deterministic bool, err error) {
	w := <-p.slots
	defer func() { p.slots <- w }()
	if w == nil {
		if w, err = p.start(); err != nil {
			return nil, false, fmt.Errorf("ytt: cannot start a worker: %w", err)
		}
	}
	resp, reuse, err := w.do(req, p.opts.Clock, p.opts.Timeout)
	if !reuse {
		p.stop(w)
		w = nil // the next evaluation in this slot starts a new worker
	}
	if err != nil {
		return nil, false, err
	}
	if resp.Error != "" {
		return nil, true, &ytt.Error{Text: resp.Error}
	}
	return resp.Out, true, nil
}

// Close stops the workers; evaluations after it fail.
func (p *Pool) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for w := range p.running {
		w.kill()
	}
}

// worker is one worker process.
type worker struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	stderr *head
	memory int64
	exited chan struct{} // closed once the process has exited and its stderr is read
}

// start starts a worker and waits until it is ready.
func (p *Pool) start() (*worker, error) {
	if p.isClosed() {
		return nil, errors.New("the pool is closed")
	}
	cmd := exec.Command(p.opts.Executable)
	cmd.Env = append(os.Environ(), EnvVar+"="+strconv.FormatInt(p.opts.Memory, 10))
	// A worker dies with the controller, even one busy in a loop (it would notice only at
	// its next read of stdin).
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	w := &worker{cmd: cmd, stderr: &head{}, memory: p.opts.Memory, exited: make(chan struct{})}
	cmd.Stderr = w.stderr
	var err error
	if w.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	w.stdout = bufio.NewReader(stdout)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		_ = cmd.Wait()
		close(w.exited)
	}()
	ready := make(chan error, 1)
	go func() {
		var hello response
		err := readFrame(w.stdout, &hello)
		if err == nil && !hello.Ready {
			err = errors.New("it did not say it was ready")
		}
		ready <- err
	}()
	select {
	case err = <-ready:
	case <-time.After(startTimeout):
		err = fmt.Errorf("not ready after %s", startTimeout)
	}
	if err != nil {
		w.kill()
		<-w.exited
		return nil, fmt.Errorf("%v%s", err, w.stderr.said())
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed { // closed while it started
		w.kill()
		return nil, errors.New("the pool is closed")
	}
	p.running[w] = struct{}{}
	return w, nil
}

func (p *Pool) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

// stop kills a worker and forgets it.
func (p *Pool) stop(w *worker) {
	w.kill()
	p.mu.Lock()
	delete(p.running, w)
	p.mu.Unlock()
}

func (w *worker) kill() {
	if w.cmd.Process != nil {
		_ = w.cmd.Process.Kill()
	}
}

// do sends req to the worker and reads its response within timeout on clk. An error means the
// worker is done for: killed at the timeout, dead of its memory limit or of anything else;
// so does a response that came as the timer killed the worker (reuse is false).
func (w *worker) do(req request, clk clock.WithDelayedExecution, timeout time.Duration) (resp response, reuse bool, err error) {
	var once sync.Once
	expired := false
	timer := clk.AfterFunc(timeout, func() {
		once.Do(func() { expired = true })
		w.kill()
	})
	err = writeFrame(bufio.NewWriter(w.stdin), req)
	if err == nil {
		err = readFrame(w.stdout, &resp)
	}
	if timer.Stop() && err == nil {
		return resp, true, nil
	}
	// The timer fired or the worker failed. Once the timer's Do has run (it runs before
	// the kill), expired is settled; after this Do the timer can no longer set it.
	once.Do(func() {})
	if err == nil {
		return resp, false, nil // the result stands; the worker was killed as it came
	}
	w.kill()
	<-w.exited
	switch {
	case expired:
		return resp, false, ytt.TimeoutError(timeout)
	case w.stderr.outOfMemory():
		return resp, false, ytt.MemoryError(w.memory)
	}
	return resp, false, fmt.Errorf("ytt: the worker evaluating the template failed: %v%s", err, w.stderr.said())
}

// head keeps the first bytes a worker wrote to stderr: why it died, before the Go
// runtime's goroutine dump.
type head struct {
	mu  sync.Mutex
	buf []byte
}

const headSize = 4 << 10

func (t *head) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if room := headSize - len(t.buf); room > 0 {
		t.buf = append(t.buf, b[:min(room, len(b))]...)
	}
	return len(b), nil
}

func (t *head) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// outOfMemory says whether the worker died of its address-space limit: the Go runtime
// cannot map more heap, or a thread's stack. Built with -race (the test binaries run as
// workers), the runtime maps its heap at fixed hints and reports a mapping the limit
// refused as an address space collision.
func (t *head) outOfMemory() bool {
	s := t.String()
	return strings.Contains(s, "out of memory") || strings.Contains(s, "cannot allocate memory") ||
		strings.Contains(s, "failed to create new OS thread") ||
		strings.Contains(s, "too many address space collisions for -race mode")
}

// said is the first line of what the worker wrote to stderr, as ": <line>", or "".
func (t *head) said() string {
	s, _, _ := strings.Cut(strings.TrimSpace(t.String()), "\n")
	if s == "" {
		return ""
	}
	return ": " + s
}
