package cluster

import (
	"context"
	"fmt"
	"os"
	"syscall"
	"time"
)

// Fault injection for the end-to-end fault suites: a component (or a controller that
// Launch started) can be killed outright, stopped, and started again with the binary
// and arguments of its last launch, so kube-apiserver comes back on the same port,
// certificates and etcd. None of this is safe for concurrent use with Launch or Stop;
// a test drives it from one goroutine.

// latest is the newest process Launch started under name.
func (c *Cluster) latest(name string) (*process, error) {
	for i := len(c.procs) - 1; i >= 0; i-- {
		if c.procs[i].name == name {
			return c.procs[i], nil
		}
	}
	return nil, fmt.Errorf("no component named %s was launched", name)
}

// Kill sends SIGKILL to the newest process named name, as an OOM kill or a node loss
// would, and waits until it has exited. The process gets no chance to clean up: a
// controller keeps its leader-election lease until the lease expires.
func (c *Cluster) Kill(name string) error {
	p, err := c.latest(name)
	if err != nil {
		return err
	}
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil && !exited(p) {
		return fmt.Errorf("killing %s: %w", name, err)
	}
	<-p.done
	return nil
}

// Terminate stops the newest process named name the way Stop does (SIGTERM, then
// SIGKILL after a grace period) and waits until it has exited. A controller releases
// its leader-election lease on SIGTERM.
func (c *Cluster) Terminate(name string) error {
	p, err := c.latest(name)
	if err != nil {
		return err
	}
	p.stop()
	return nil
}

// Relaunch starts name again with the binary and arguments of its newest launch,
// which must have exited. Its output is appended to the same log.
func (c *Cluster) Relaunch(ctx context.Context, name string) error {
	p, err := c.latest(name)
	if err != nil {
		return err
	}
	if !exited(p) {
		return fmt.Errorf("%s (pid %d) is still running", name, p.cmd.Process.Pid)
	}
	return c.Launch(ctx, name, p.cmd.Path, p.cmd.Args[1:]...)
}

// Restart terminates name, relaunches it with the same flags once downtime has passed
// since it was signalled and, for kube-apiserver, waits until it is ready again.
// kube-apiserver closes its listener as soon as it gets SIGTERM but may take the whole
// grace period to exit, so the downtime counts from the signal.
func (c *Cluster) Restart(ctx context.Context, name string, downtime time.Duration) error {
	signalled := time.Now()
	if err := c.Terminate(name); err != nil {
		return err
	}
	select {
	case <-time.After(time.Until(signalled.Add(downtime))):
	case <-ctx.Done():
		return ctx.Err()
	}
	if err := c.Relaunch(ctx, name); err != nil {
		return err
	}
	if name == "kube-apiserver" {
		return c.WaitReady(ctx)
	}
	return nil
}

// WaitReady waits until kube-apiserver answers /readyz with ok.
func (c *Cluster) WaitReady(ctx context.Context) error {
	if err := waitReady(ctx, c.Config); err != nil {
		return fmt.Errorf("kube-apiserver not ready (see %s): %w", c.LogPath("kube-apiserver"), err)
	}
	return nil
}

// Exited reports whether the newest process named name has exited, and if so how.
func (c *Cluster) Exited(name string) (bool, *os.ProcessState) {
	p, err := c.latest(name)
	if err != nil || !exited(p) {
		return false, nil
	}
	return true, p.cmd.ProcessState
}

func exited(p *process) bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}
