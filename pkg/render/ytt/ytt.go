package ytt

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"time"

	yttcmd "carvel.dev/ytt/pkg/cmd/template"
	"carvel.dev/ytt/pkg/files"
	uierrs "github.com/cppforlife/go-cli-ui/errors"
)

// Limits of one evaluation (DESIGN §11): past either it fails with an *Error naming it.
const (
	// Timeout is how long one evaluation may take, Cartographer's own limit.
	Timeout = 4 * time.Second
	// MemoryLimit is how much memory one evaluation may take on top of what its process
	// holds before it starts; enforced by the worker processes (internal/yttworker).
	MemoryLimit = 256 << 20
)

// FileName is the name ytt gives the template in its messages, as for the binary's `-f -`.
const FileName = "stdin.yml"

// Error is why ytt could not evaluate a template: Text is what the ytt binary would print on
// stderr ("ytt: Error: ...", with the file and line), or the limit the evaluation exceeded.
type Error struct {
	Text string
}

// Error implements error.
func (e *Error) Error() string { return e.Text }

// TimeoutError is the *Error of an evaluation that took longer than limit.
func TimeoutError(limit time.Duration) *Error {
	return &Error{Text: fmt.Sprintf("ytt: evaluation exceeded the time limit of %s", limit)}
}

// MemoryError is the *Error of an evaluation that took more memory than limit bytes.
func MemoryError(limit int64) *Error {
	return &Error{Text: fmt.Sprintf("ytt: evaluation exceeded the memory limit of %d MiB", limit>>20)}
}

// Eval evaluates source with values, one data value per top-level key, and returns the
// output as the ytt binary prints it: every non-empty document, as YAML. A template ytt
// rejects is an *Error. Eval has no bound in time or memory (see the package doc).
func Eval(source string, values map[string]any) ([]byte, error) {
	flags, err := DataValues(values)
	if err != nil {
		return nil, err
	}
	return EvalFlags(source, flags)
}

// EvalFlags is Eval with the data values given as DataValues makes them.
func EvalFlags(source string, flags []string) (out []byte, err error) {
	defer func() {
		// The library is not written to be fed arbitrary input in a long-lived process.
		if r := recover(); r != nil {
			out, err = nil, &Error{Text: fmt.Sprintf("ytt: Error: %v\n", r)}
		}
	}()
	file, err := files.NewFileFromSource(files.NewBytesSource(FileName, []byte(source)))
	if err != nil {
		return nil, err
	}
	opts := yttcmd.NewOptions()
	opts.DataValuesFlags.KVsFromYAML = flags
	result := opts.RunWithFiles(yttcmd.Input{Files: []*files.File{file}}, quietUI{})
	if result.Err != nil {
		return nil, &Error{Text: fmt.Sprintf("ytt: Error: %s\n", uierrs.NewMultiLineError(result.Err))}
	}
	return result.DocSet.AsBytes()
}

// DataValues are Cartographer's --data-value-yaml flags for values: key=<compact JSON>, which
// YAML reads back with its types. Sorted, so an evaluation does not depend on map order.
func DataValues(values map[string]any) ([]string, error) {
	flags := make([]string, 0, len(values))
	for k, v := range values {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("unable to marshal template context: %w", err)
		}
		flags = append(flags, k+"="+string(b))
	}
	slices.Sort(flags)
	return flags, nil
}

// quietUI drops what ytt would print besides its result: warnings and debug output.
type quietUI struct{}

func (quietUI) Printf(string, ...any)  {}
func (quietUI) Debugf(string, ...any)  {}
func (quietUI) Warnf(string, ...any)   {}
func (quietUI) DebugWriter() io.Writer { return io.Discard }

// InProcess evaluates templates in this process within Timeout. An evaluation past it is
// abandoned, not stopped: its goroutine runs on until ytt returns. Fit for a process that
// ends soon after (the CLI), not for the controller.
type InProcess struct {
	// Timeout is the time limit; Timeout (the package's) when zero.
	Timeout time.Duration
}

// Eval implements render.YTT.
func (p InProcess) Eval(source string, values map[string]any) ([]byte, error) {
	limit := p.Timeout
	if limit == 0 {
		limit = Timeout
	}
	type result struct {
		out []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := Eval(source, values)
		done <- result{out, err}
	}()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case r := <-done:
		return r.out, r.err
	case <-timer.C:
		return nil, TimeoutError(limit)
	}
}
