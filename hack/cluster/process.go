package cluster

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// process is one component, its output going to <Dir>/logs/<name>.log.
type process struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
	log  *os.File
}

// Launch starts a component (or any program, such as the controller) whose lifetime
// the cluster owns: Stop ends it, newest first. Its output goes to <Dir>/logs/<name>.log.
// Pdeathsig makes the kernel kill it if this process dies without calling Stop, so a
// crashed test never leaves a control plane behind.
func (c *Cluster) Launch(ctx context.Context, name, bin string, args ...string) error {
	log, err := os.OpenFile(c.LogPath(name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		return errors.Join(fmt.Errorf("starting %s: %w", name, err), log.Close())
	}
	p := &process{name: name, cmd: cmd, done: make(chan struct{}), log: log}
	go func() {
		_ = cmd.Wait()
		close(p.done)
	}()
	c.procs = append(c.procs, p)
	// A component that exits within its first moments has a bad flag or a port
	// clash; report that now rather than as a later timeout.
	select {
	case <-p.done:
		return fmt.Errorf("%s exited at startup (%s); see %s", name, cmd.ProcessState, c.LogPath(name))
	case <-time.After(300 * time.Millisecond):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Pid is the process id of the latest component Launch started under name, or 0 if
// there is none. The benchmark reads the controller's CPU time and memory from /proc.
func (c *Cluster) Pid(name string) int {
	for i := len(c.procs) - 1; i >= 0; i-- {
		if c.procs[i].name == name {
			return c.procs[i].cmd.Process.Pid
		}
	}
	return 0
}

// stop asks the component to terminate and kills it after a grace period.
func (p *process) stop() {
	// The log is the component's output, and the component is gone: a failed close
	// loses nothing.
	defer func() { _ = p.log.Close() }()
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// writeServiceAccountKey writes the key pair kube-apiserver signs service account
// tokens with (sa.key) and verifies them with (sa.pub).
func writeServiceAccountKey(dir string) error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return err
	}
	priv := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	if err := os.WriteFile(filepath.Join(dir, "sa.key"), priv, 0o600); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "sa.pub"), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o644)
}
