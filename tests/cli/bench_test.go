package cli

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/surveyor-dev/surveyor/hack/tools"
	"github.com/surveyor-dev/surveyor/internal/harness"
)

// benchWorkloads is how many Workloads BenchmarkGetAll lists, spread over benchNamespaces.
const (
	benchWorkloads  = 1000
	benchNamespaces = 4
)

var benchSetup sync.Once

// BenchmarkGetAll times `kubectl carto get -A`, the built plugin run as a user would,
// over 1,000 Ready Workloads in 4 namespaces, each with three stamped resources, and
// `kubectl get workloads -A` over the same for reference. It is not run by `go test`
// without -bench:
//
//	go test -count=1 -run '^$' -bench GetAll -benchtime 10x ./tests/cli/
func BenchmarkGetAll(b *testing.B) {
	benchSetup.Do(func() { env.ReadyWorkloads(ctx, b, "bench-cli", benchWorkloads, benchNamespaces, 10*time.Minute) })
	plugin := filepath.Join(b.TempDir(), "kubectl-carto")
	build := exec.Command("go", "build", "-o", plugin, "./cmd/kubectl-carto")
	build.Dir = harness.Root()
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("building kubectl-carto: %v: %s", err, out)
	}
	kubectl, err := tools.Path("kubectl", io.Discard)
	if err != nil {
		b.Fatal(err)
	}
	for _, cmd := range []struct {
		name string
		argv []string
	}{
		{"kubectl-carto", []string{plugin, "get", "-A"}},
		{"kubectl", []string{kubectl, "get", "workloads", "-A"}},
	} {
		b.Run(cmd.name, func(b *testing.B) {
			var out bytes.Buffer
			for b.Loop() {
				out.Reset()
				c := exec.Command(cmd.argv[0], append(cmd.argv[1:], "--kubeconfig", env.Cluster.Kubeconfig)...)
				c.Stdout, c.Stderr = &out, os.Stderr
				if err := c.Run(); err != nil {
					b.Fatal(err)
				}
			}
			if rows := strings.Count(out.String(), "\n") - 1; rows < benchWorkloads {
				b.Fatalf("%s printed %d rows, want at least %d", cmd.name, rows, benchWorkloads)
			}
		})
	}
}
