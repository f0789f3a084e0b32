package harness

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// ProcStat is what /proc says about a process.
type ProcStat struct {
	// CPU is user plus system time.
	CPU time.Duration
	// RSS is the resident set (VmRSS); HWM its peak over the process's life (VmHWM).
	RSS, HWM uint64
}

// UserHZ is the unit of the times in /proc/<pid>/stat and /proc/stat. It is 100 on
// every Linux architecture Go supports (the kernel's USER_HZ, not its tick rate).
const UserHZ = 100

// ReadProc reads the CPU time and memory of a running process (a pid from
// Cluster.Pid or Controller.Pid).
func ReadProc(pid int) (ProcStat, error) {
	var st ProcStat
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return st, err
	}
	// The command name (field 2) may hold spaces; the fields after its closing
	// parenthesis start at field 3, so utime (14) and stime (15) are at 11 and 12.
	i := strings.LastIndexByte(string(stat), ')')
	fields := strings.Fields(string(stat[i+1:]))
	if len(fields) < 13 {
		return st, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	var ticks uint64
	for _, f := range fields[11:13] {
		t, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return st, err
		}
		ticks += t
	}
	st.CPU = time.Duration(ticks) * time.Second / UserHZ
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return st, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		var dst *uint64
		switch key {
		case "VmRSS":
			dst = &st.RSS
		case "VmHWM":
			dst = &st.HWM
		default:
			continue
		}
		kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(val), " kB"), 10, 64)
		if err != nil {
			return st, fmt.Errorf("/proc/%d/status %s: %w", pid, key, err)
		}
		*dst = kb * 1024
	}
	return st, nil
}

// ReadChildren sums ReadProc over the live children of a process (the controller's ytt
// workers, internal/yttworker): their CPU, RSS and peak RSS added up. A child that has
// exited is not counted.
func ReadChildren(pid int) (ProcStat, error) {
	var sum ProcStat
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return sum, err
	}
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", child))
		if err != nil {
			continue // gone meanwhile
		}
		i := strings.LastIndexByte(string(stat), ')')
		fields := strings.Fields(string(stat[i+1:]))
		if len(fields) < 2 || fields[1] != strconv.Itoa(pid) {
			continue
		}
		st, err := ReadProc(child)
		if err != nil {
			continue
		}
		sum.CPU += st.CPU
		sum.RSS += st.RSS
		sum.HWM += st.HWM
	}
	return sum, nil
}
