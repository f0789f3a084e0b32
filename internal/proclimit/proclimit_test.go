package proclimit

import (
	"testing"
	"testing/fstest"
)

func TestCgroupMemoryLimit(t *testing.T) {
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	tests := []struct {
		name      string
		root      fstest.MapFS
		wantFile  string
		wantLimit int64
	}{
		{"no cgroup file", fstest.MapFS{}, "", 0},
		{"v2", fstest.MapFS{
			"proc/self/cgroup":         file("0::/\n"),
			"sys/fs/cgroup/memory.max": file("536870912\n"),
		}, "/sys/fs/cgroup/memory.max", 536870912},
		{"v2 nested", fstest.MapFS{
			"proc/self/cgroup":                       file("0::/kubepods/pod1\n"),
			"sys/fs/cgroup/kubepods/pod1/memory.max": file("1048576"),
		}, "/sys/fs/cgroup/kubepods/pod1/memory.max", 1048576},
		{"v2 without a limit", fstest.MapFS{
			"proc/self/cgroup":         file("0::/\n"),
			"sys/fs/cgroup/memory.max": file("max\n"),
		}, "", 0},
		{"v1", fstest.MapFS{
			"proc/self/cgroup": file("12:cpu,cpuacct:/\n4:memory:/docker/abc\n"),
			"sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes": file("268435456\n"),
		}, "/sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes", 268435456},
		{"v1 unlimited", fstest.MapFS{
			"proc/self/cgroup":                           file("4:memory:/\n"),
			"sys/fs/cgroup/memory/memory.limit_in_bytes": file("9223372036854771712\n"),
		}, "", 0},
		{"hybrid: v2 file missing, v1 read", fstest.MapFS{
			"proc/self/cgroup":                           file("4:memory:/\n0::/\n"),
			"sys/fs/cgroup/memory/memory.limit_in_bytes": file("1000\n"),
		}, "/sys/fs/cgroup/memory/memory.limit_in_bytes", 1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gotFile, gotLimit := cgroupMemoryLimit(tt.root)
			if gotFile != tt.wantFile || gotLimit != tt.wantLimit {
				t.Errorf("cgroupMemoryLimit() = %q, %d; want %q, %d", gotFile, gotLimit, tt.wantFile, tt.wantLimit)
			}
		})
	}
}
