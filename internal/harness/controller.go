package harness

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/surveyor-dev/surveyor/hack/cluster"
)

// Process says how LaunchController runs the controller as a process of its own.
type Process struct {
	// Name names the process among the cluster's (Cluster.Kill, Relaunch, LogPath).
	Name string
	// Bin is the controller binary; empty means the one Main built
	// (Options.BuildController).
	Bin string
	// Env is environment ("K=V") for the controller alone, not for the control plane
	// started from this process's environment.
	Env []string
	// NoLeaderElection runs it without leader election, which is otherwise on, as
	// deployed, in ControllerNamespace.
	NoLeaderElection bool
	// Metrics serves its metrics on a loopback port (Controller.Metrics); otherwise it
	// serves none.
	Metrics bool
	// Pprof serves net/http/pprof on a loopback port (Controller.PprofURL).
	Pprof bool
	// Args are further flags, after the harness's own: a flag given again here wins.
	Args []string
}

// Controller is a controller process the cluster launched (LaunchController). Relaunched
// with Cluster.Relaunch, it keeps its flags, and so its ports.
type Controller struct {
	Name string
	// ReadyzURL is its health probe's /readyz. MetricsURL (HTTPS) and PprofURL (the
	// /debug/pprof prefix) are empty unless Process asked for them.
	ReadyzURL, MetricsURL, PprofURL string

	cluster *cluster.Cluster
	// metrics reads MetricsURL as the cluster admin.
	metrics *http.Client
}

// ControllerBinary is cmd/surveyor as the suite built it (Options.BuildController), or "".
func (e *Env) ControllerBinary() string { return e.controllerBin }

// LaunchController starts the controller as a process the cluster owns (Stop ends it),
// authenticated as the controller's ServiceAccount, with its health probe and whatever
// else p asks for on loopback ports. It returns once the process is running, not ready
// (Controller.WaitReady).
func (e *Env) LaunchController(ctx context.Context, p Process) (*Controller, error) {
	bin := p.Bin
	if bin == "" {
		bin = e.controllerBin
	}
	if bin == "" {
		return nil, fmt.Errorf("launching %s: the suite did not build the controller (harness.Options.BuildController)", p.Name)
	}
	kubeconfig, err := e.Cluster.ServiceAccountKubeconfig(ctx, ControllerNamespace, ControllerAccount)
	if err != nil {
		return nil, err
	}
	addr := func() (string, error) {
		port, err := cluster.FreePort()
		return "127.0.0.1:" + strconv.Itoa(port), err
	}
	c := &Controller{Name: p.Name, cluster: e.Cluster}
	probe, err := addr()
	if err != nil {
		return nil, err
	}
	c.ReadyzURL = "http://" + probe + "/readyz"
	args := []string{"--kubeconfig=" + kubeconfig, "--health-probe-bind-address=" + probe}
	if !p.NoLeaderElection {
		args = append(args, "--leader-elect", "--leader-election-namespace="+ControllerNamespace)
	}
	metrics := "0"
	if p.Metrics {
		if metrics, err = addr(); err != nil {
			return nil, err
		}
		c.MetricsURL = "https://" + metrics + "/metrics"
		c.metrics = e.AdminMetricsClient()
	}
	args = append(args, "--metrics-bind-address="+metrics)
	if p.Pprof {
		pprof, err := addr()
		if err != nil {
			return nil, err
		}
		c.PprofURL = "http://" + pprof + "/debug/pprof"
		args = append(args, "--pprof-bind-address="+pprof)
	}
	args = append(args, p.Args...)
	if len(p.Env) > 0 {
		// env(1) execs the controller in its own process, so the pid stays the
		// controller's, and the variables reach the controller alone.
		args = append(append(append([]string{}, p.Env...), bin), args...)
		bin = "/usr/bin/env"
	}
	if err := e.Cluster.Launch(ctx, p.Name, bin, args...); err != nil {
		return nil, err
	}
	return c, nil
}

// LaunchForTest is LaunchController for one test: it fails the test if the controller
// does not start, and after the test terminates it, which releases its leader-election
// lease for the next test, and logs the end of its log if the test failed.
func (e *Env) LaunchForTest(ctx context.Context, t testing.TB, p Process) *Controller {
	t.Helper()
	c, err := e.LaunchController(ctx, p)
	if err != nil {
		t.Fatalf("launching %s: %v", p.Name, err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("last lines of %s's log:\n%s", c.Name, c.LogTail(80))
		}
		_ = e.Cluster.Terminate(c.Name)
	})
	return c
}

// Pid is the process id of the controller's latest launch.
func (c *Controller) Pid() int { return c.cluster.Pid(c.Name) }

// Proc reads the CPU time and memory of the controller's latest launch from /proc.
func (c *Controller) Proc() (ProcStat, error) { return ReadProc(c.Pid()) }

// Metrics scrapes the controller's metrics endpoint as the cluster admin: every family,
// or with families only those.
func (c *Controller) Metrics(ctx context.Context, families ...string) (Metrics, error) {
	if c.MetricsURL == "" {
		return nil, fmt.Errorf("%s serves no metrics (harness.Process.Metrics)", c.Name)
	}
	// The metrics server may still be making its certificate while the controller already
	// reconciles: a refused connection is waited out, for a minute, anything else returned.
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		m, err := ScrapeMetrics(ctx, c.metrics, c.MetricsURL, families...)
		if !errors.Is(err, syscall.ECONNREFUSED) {
			return m, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for %s's metrics server: %w", c.Name, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Ready reports whether the controller answers /readyz with 200.
func (c *Controller) Ready(ctx context.Context) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.ReadyzURL, nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// WaitReady waits up to timeout until the controller is ready.
func (c *Controller) WaitReady(ctx context.Context, timeout time.Duration) error {
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		return c.Ready(ctx), nil
	})
	if err != nil {
		return fmt.Errorf("%s never became ready (see %s): %w", c.Name, c.LogPath(), err)
	}
	return nil
}

// LogPath is the file every launch of the controller writes its log to.
func (c *Controller) LogPath() string { return c.cluster.LogPath(c.Name) }

// Log is everything the controller (every launch of it) has written.
func (c *Controller) Log() string {
	b, _ := os.ReadFile(c.LogPath())
	return string(b)
}

// LogTail is the last n lines of Log.
func (c *Controller) LogTail(n int) string {
	lines := strings.Split(strings.TrimRight(c.Log(), "\n"), "\n")
	return strings.Join(lines[max(len(lines)-n, 0):], "\n")
}
