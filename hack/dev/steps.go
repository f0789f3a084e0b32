package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// runStep runs one step of `make test` (dev step -dir DIR NAME -- CMD ARGS...): its output
// goes to DIR/NAME.log, so that steps running side by side do not interleave, and its
// start, end and result to DIR/NAME.time, which summarize reads. A failed step's log is
// printed whole, as that is what CI shows of it; a passing step prints its last lines.
func runStep(dir, name string, argv []string) error {
	if len(argv) == 0 {
		return errors.New("usage: dev step -dir DIR NAME -- CMD [ARGS...]")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	logPath := filepath.Join(dir, name+".log")
	log, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer func() { _ = log.Close() }() // the step's log: a failed close costs at most its tail
	fmt.Printf("%s  start %s (log: %s)\n", time.Now().UTC().Format("15:04:05"), name, logPath)
	start := time.Now()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = log, log
	runErr := cmd.Run()
	took := time.Since(start)
	result := "ok"
	if runErr != nil {
		result = "FAIL"
	}
	record := fmt.Sprintf("%d %d %s\n", start.UnixMilli(), took.Milliseconds(), result)
	if err := os.WriteFile(filepath.Join(dir, name+".time"), []byte(record), 0o644); err != nil {
		return err
	}
	if runErr != nil {
		fmt.Printf("%s  FAIL  %s after %.0fs: %v; its log:\n", time.Now().UTC().Format("15:04:05"), name, took.Seconds(), runErr)
		_, _ = log.Seek(0, io.SeekStart)
		_, _ = io.Copy(os.Stdout, log)
		fmt.Printf("--- end of %s ---\n", logPath)
		return fmt.Errorf("step %s failed", name)
	}
	fmt.Printf("%s  ok    %s in %.0fs\n", time.Now().UTC().Format("15:04:05"), name, took.Seconds())
	_, _ = log.Seek(0, io.SeekStart)
	for _, line := range lastLines(log, 3) {
		fmt.Printf("        %s\n", line)
	}
	return nil
}

func lastLines(r io.Reader, n int) []string {
	var lines []string
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 64<<10), 1<<20)
	for s.Scan() {
		if line := strings.TrimSpace(s.Text()); line != "" {
			lines = append(lines, line)
		}
	}
	return lines[max(0, len(lines)-n):]
}

type stepTime struct {
	name   string
	start  time.Time
	took   time.Duration
	result string
}

// summarize prints a table of the steps recorded in dir (dev times -dir DIR), in the order
// they started: when each started after the first, how long it took, its result. The wall
// time against the sum of the steps says how much running them side by side saved.
func summarize(dir string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.time"))
	if err != nil {
		return err
	}
	var steps []stepTime
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		fields := strings.Fields(string(b))
		if len(fields) != 3 {
			return fmt.Errorf("%s: want start, milliseconds and result, got %q", f, b)
		}
		start, err1 := strconv.ParseInt(fields[0], 10, 64)
		took, err2 := strconv.ParseInt(fields[1], 10, 64)
		if err := errors.Join(err1, err2); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		steps = append(steps, stepTime{
			name: strings.TrimSuffix(filepath.Base(f), ".time"), start: time.UnixMilli(start),
			took: time.Duration(took) * time.Millisecond, result: fields[2],
		})
	}
	// Steps that started but never recorded an end (make stopped them) show as unfinished.
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	for _, l := range logs {
		name := strings.TrimSuffix(filepath.Base(l), ".log")
		if !slices.ContainsFunc(steps, func(s stepTime) bool { return s.name == name }) {
			steps = append(steps, stepTime{name: name, result: "unfinished"})
		}
	}
	if len(steps) == 0 {
		return fmt.Errorf("no steps recorded in %s", dir)
	}
	slices.SortStableFunc(steps, func(a, b stepTime) int { return a.start.Compare(b.start) })
	var first, last time.Time
	var sum time.Duration
	for _, s := range steps {
		if s.start.IsZero() {
			continue
		}
		if first.IsZero() || s.start.Before(first) {
			first = s.start
		}
		if end := s.start.Add(s.took); end.After(last) {
			last = end
		}
		sum += s.took
	}
	fmt.Printf("\n%-22s %8s %8s  %s\n", "step", "start s", "took s", "result")
	for _, s := range steps {
		at := "-"
		if !s.start.IsZero() {
			at = fmt.Sprintf("%.0f", s.start.Sub(first).Seconds())
		}
		fmt.Printf("%-22s %8s %8.0f  %s\n", s.name, at, s.took.Seconds(), s.result)
	}
	wall := last.Sub(first)
	fmt.Printf("%-22s %8s %8.0f  (wall, first start to last end; the steps' sum is %.0fs, %.1fx the wall)\n",
		"total", "", wall.Seconds(), sum.Seconds(), sum.Seconds()/max(wall.Seconds(), 1))
	return nil
}
