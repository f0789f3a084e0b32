package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// profiler records the controller's CPU profile while it converges. net/http/pprof
// profiles a fixed number of seconds, and convergence time is what is being measured,
// so it takes back-to-back segments until stopped and merges them afterwards.
type profiler struct {
	base, dir string
	segment   time.Duration

	stopping chan struct{}
	done     chan struct{}
	files    []string
	heap     string
	err      error
}

// newProfiler returns a profiler writing to dir, or nil (which does nothing) when
// profiling is off.
func newProfiler(enabled bool, pprofURL, dir string) *profiler {
	if !enabled {
		return nil
	}
	return &profiler{base: pprofURL, dir: dir, segment: 5 * time.Second}
}

func (p *profiler) start(ctx context.Context) {
	if p == nil {
		return
	}
	p.stopping, p.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(p.done)
		for i := 0; ; i++ {
			select {
			case <-p.stopping:
				return
			default:
			}
			path := filepath.Join(p.dir, fmt.Sprintf("cpu-%03d.pb.gz", i))
			url := fmt.Sprintf("%s/profile?seconds=%d", p.base, int(p.segment.Seconds()))
			if err := fetch(ctx, url, path); err != nil {
				p.err = err
				return
			}
			p.files = append(p.files, path)
		}
	}()
}

// stop ends profiling after the segment in progress.
func (p *profiler) stop() {
	if p == nil || p.stopping == nil {
		return
	}
	close(p.stopping)
	<-p.done
}

// profileResult names the profile files and holds pprof's summaries of them.
type profileResult struct {
	Dir     string   `json:"dir"`
	CPU     string   `json:"cpu,omitempty"`
	Heap    string   `json:"heap,omitempty"`
	CPUTop  string   `json:"cpuTop,omitempty"`
	CPUCum  string   `json:"cpuCum,omitempty"`
	HeapTop string   `json:"heapTop,omitempty"`
	Errors  []string `json:"errors,omitempty"`
}

// takeHeap saves the controller's heap profile now (right after convergence, when it
// holds the most).
func (p *profiler) takeHeap(ctx context.Context) {
	if p == nil {
		return
	}
	path := filepath.Join(p.dir, "heap.pb.gz")
	if err := fetch(ctx, p.base+"/heap", path); err != nil {
		p.err = err
		return
	}
	p.heap = path
}

// summarize merges the CPU segments into cpu.pb.gz and keeps `go tool pprof -top` of
// it (flat and cumulative) and of the heap profile. It runs the pprof tool, so call it
// once measuring is over: it competes with the controller for the CPU.
func (p *profiler) summarize(ctx context.Context) *profileResult {
	if p == nil {
		return nil
	}
	r := &profileResult{Dir: p.dir}
	if p.err != nil {
		r.Errors = append(r.Errors, p.err.Error())
	}
	if len(p.files) > 0 {
		r.CPU = filepath.Join(p.dir, "cpu.pb.gz")
		args := append([]string{"tool", "pprof", "-proto", "-output=" + r.CPU}, p.files...)
		if _, err := goTool(ctx, args...); err != nil {
			r.Errors = append(r.Errors, err.Error())
			r.CPU = ""
		} else {
			for _, f := range p.files {
				_ = os.Remove(f)
			}
		}
	}
	if r.CPU != "" {
		var err error
		if r.CPUTop, err = goTool(ctx, "tool", "pprof", "-top", "-nodecount=30", r.CPU); err != nil {
			r.Errors = append(r.Errors, err.Error())
		}
		if r.CPUCum, err = goTool(ctx, "tool", "pprof", "-top", "-cum", "-nodecount=40", r.CPU); err != nil {
			r.Errors = append(r.Errors, err.Error())
		}
	}
	if p.heap != "" {
		r.Heap = p.heap
		var err error
		if r.HeapTop, err = goTool(ctx, "tool", "pprof", "-top", "-sample_index=inuse_space", "-nodecount=25", p.heap); err != nil {
			r.Errors = append(r.Errors, err.Error())
		}
	}
	for name, text := range map[string]string{"cpu-top.txt": r.CPUTop, "cpu-cum.txt": r.CPUCum, "heap-top.txt": r.HeapTop} {
		if text != "" {
			_ = os.WriteFile(filepath.Join(p.dir, name), []byte(text), 0o644)
		}
	}
	return r
}

// fetch GETs url into path.
func fetch(ctx context.Context, url, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		return errors.Join(err, f.Close())
	}
	return f.Close()
}

// goTool runs the go command ($GO, else go) and returns its output.
func goTool(ctx context.Context, args ...string) (string, error) {
	goBin := os.Getenv("GO")
	if goBin == "" {
		goBin = "go"
	}
	out, err := exec.CommandContext(ctx, goBin, args...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go %s: %w: %s", strings.Join(args[:min(3, len(args))], " "), err, out)
	}
	return string(out), nil
}
