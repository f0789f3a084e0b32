package proclimit

import (
	"io/fs"
	"os"
	"path"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
)

// SetMaxProcs runs the controller on one processor unless GOMAXPROCS says otherwise, and
// returns the processors it runs on. The controller spends most of its time waiting on the
// API server, and with two processors the Go scheduler's parking and waking of threads
// (futex, findRunnable) cost more CPU for no faster convergence (docs/performance.md, "What changed
// (issue 15)", has the make bench figures).
func SetMaxProcs() int {
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
	return runtime.GOMAXPROCS(0)
}

// SetMemoryLimit gives the Go runtime a soft memory limit, so that the garbage collector
// works harder as the process nears its container's limit instead of being killed at it,
// and returns the limit and where it came from (0 and "" for none). GOMEMLIMIT, when set
// (config/manager sets it from the container's limits.memory), is the runtime's own;
// otherwise the limit is 90% of the memory limit of the process's cgroup, when it has one
// (make run inside a container, a Deployment without the variable).
func SetMemoryLimit() (int64, string) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return debug.SetMemoryLimit(-1), "GOMEMLIMIT"
	}
	file, limit := cgroupMemoryLimit(os.DirFS("/"))
	if limit <= 0 {
		return 0, ""
	}
	limit = limit / 10 * 9
	debug.SetMemoryLimit(limit)
	return limit, file
}

// cgroupMemoryLimit reads the memory limit of the process's cgroup (v2, else v1) from
// root, the file system's root, and the file it read it from; 0 when there is none.
func cgroupMemoryLimit(root fs.FS) (string, int64) {
	own, err := fs.ReadFile(root, "proc/self/cgroup")
	if err != nil {
		return "", 0
	}
	var files []string
	for _, line := range strings.Split(strings.TrimSpace(string(own)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		switch {
		case len(parts) != 3:
		case parts[0] == "0" && parts[1] == "":
			files = append(files, path.Join("sys/fs/cgroup", parts[2], "memory.max"))
		case slices.Contains(strings.Split(parts[1], ","), "memory"):
			files = append(files, path.Join("sys/fs/cgroup/memory", parts[2], "memory.limit_in_bytes"))
		}
	}
	for _, file := range files {
		b, err := fs.ReadFile(root, file)
		if err != nil {
			continue
		}
		limit, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil || limit <= 0 || limit >= 1<<60 { // "max", or cgroup v1's "unlimited"
			continue
		}
		return "/" + file, limit
	}
	return "", 0
}
