package cluster

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// TestFreePortsClaimsAgainstOtherProcesses: every port freePorts hands out is locked, so a
// second open of its file (as another process would) cannot claim it.
func TestFreePortsClaimsAgainstOtherProcesses(t *testing.T) {
	ports, err := freePorts(3)
	if err != nil {
		t.Fatal(err)
	}
	for _, port := range ports {
		f, err := os.OpenFile(filepath.Join(os.TempDir(), "surveyor-ports", strconv.Itoa(port)), os.O_RDWR, 0)
		if err != nil {
			t.Fatalf("port %d: %v", port, err)
		}
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		_ = f.Close()
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			t.Errorf("port %d: another claim got %v, want EWOULDBLOCK", port, err)
		}
	}
}
