package yttworker

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"

	"github.com/surveyor-dev/surveyor/pkg/render/ytt"
)

// EnvVar starts a process as a ytt worker; its value is the worker's memory budget in bytes.
const EnvVar = "SURVEYOR_YTT_WORKER"

// maxFrame bounds a request or a response: a template and its data values, or its output.
const maxFrame = 64 << 20

// request is one evaluation: the template and its data values as ytt.DataValues makes them.
// Bytes, not strings: JSON would replace invalid UTF-8, and the worker must see what the
// controller was given (as ytt in process would).
type request struct {
	Source []byte   `json:"source"`
	Flags  [][]byte `json:"flags"`
}

// response is what became of a request: the output, or the ytt error's text.
type response struct {
	Out   []byte `json:"out,omitempty"`
	Error string `json:"error,omitempty"`
	// Ready is the worker's first message, sent once its limit is in place.
	Ready bool `json:"ready,omitempty"`
}

// RunIfWorker runs this process as a ytt worker when EnvVar is set, and then exits;
// otherwise it returns at once. See the package doc for where to call it.
func RunIfWorker() {
	budget := os.Getenv(EnvVar)
	if budget == "" {
		return
	}
	if err := serve(budget, os.Stdin, os.Stdout); !errors.Is(err, io.EOF) {
		fmt.Fprintln(os.Stderr, "ytt worker:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// serve limits the process's memory to its current size plus budget bytes, says it is ready,
// then answers requests from in on out until in ends, when it returns io.EOF. It never
// returns nil.
func serve(budget string, in io.Reader, out io.Writer) error {
	limit, err := strconv.ParseInt(budget, 10, 64)
	if err != nil || limit <= 0 {
		return fmt.Errorf("%s=%q: want the memory budget in bytes", EnvVar, budget)
	}
	// One evaluation at a time, on one processor: a runaway costs one CPU until it is killed.
	runtime.GOMAXPROCS(1)
	// A worker's live heap is small against what an evaluation allocates, so at the default
	// GOGC the collector runs every few evaluations; 200 trades a little memory for much of
	// that time (docs/ytt.md, "Figures"). Near the budget the collector works harder
	// rather than letting garbage reach it.
	debug.SetGCPercent(200)
	debug.SetMemoryLimit(limit)
	if err := limitAddressSpace(limit); err != nil {
		return err
	}
	r, w := bufio.NewReader(in), bufio.NewWriter(out)
	if err := writeFrame(w, response{Ready: true}); err != nil {
		return err
	}
	for {
		var req request
		if err := readFrame(r, &req); err != nil {
			return err
		}
		flags := make([]string, len(req.Flags))
		for i, f := range req.Flags {
			flags[i] = string(f)
		}
		var resp response
		resp.Out, err = ytt.EvalFlags(string(req.Source), flags)
		if err != nil {
			resp.Error = err.Error()
		}
		if err := writeFrame(w, resp); err != nil {
			return err
		}
	}
}

// limitAddressSpace sets RLIMIT_AS to the process's address space now (VmSize) plus budget
// bytes. An absolute limit would not do: the Go runtime reserves address space it does not
// use, so what the process may still map is what matters. Past the limit an allocation
// fails and the runtime dies with "out of memory", which the Pool reports as the limit.
func limitAddressSpace(budget int64) error {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return fmt.Errorf("reading the process size: %w", err)
	}
	var size int64 = -1
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmSize:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				return fmt.Errorf("reading the process size from %q: %w", line, err)
			}
			size = kb << 10
		}
	}
	if size < 0 {
		return errors.New("reading the process size: no VmSize in /proc/self/status")
	}
	lim := uint64(size + budget)
	return syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: lim, Max: lim})
}

func writeFrame(w *bufio.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if len(b) > maxFrame {
		return fmt.Errorf("a message of %d bytes is over the %d-byte limit", len(b), maxFrame)
	}
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(b)))
	if _, err := w.Write(n[:]); err != nil {
		return err
	}
	if _, err := w.Write(b); err != nil {
		return err
	}
	return w.Flush()
}

func readFrame(r *bufio.Reader, v any) error {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return err
	}
	size := binary.BigEndian.Uint32(n[:])
	if size > maxFrame {
		return fmt.Errorf("a message of %d bytes is over the %d-byte limit", size, maxFrame)
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(r, b); err != nil {
		return err
	}
	return json.NewDecoder(bytes.NewReader(b)).Decode(v)
}
