// Command kubectl-carto is the kubectl plugin of Surveyor (DESIGN §10): `kubectl carto`
// reads Workloads, Deliverables and blueprints with the user's own kubeconfig and RBAC,
// and prints them through pkg/view; it renders and lints supply chains offline.
//
// Exit codes: 0 success; 1 an error, or (why, wait) an owner that is not Ready; 2 a wait
// that timed out.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"golang.org/x/term"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/klog/v2"

	"github.com/surveyor-dev/surveyor/pkg/view"
)

func main() {
	// client-go reports a watch that ends with its context (Ctrl-C, a timeout) through
	// klog; a command says what matters itself, in one line.
	klog.SetLogger(logr.Discard())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// exitError ends the command with code; err, when set, is its one-line message.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

// run runs the plugin with args and returns its exit code. Errors are one line on
// stderr, never a stack trace.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	a := &app{flags: genericclioptions.NewConfigFlags(true), in: stdin, out: stdout, errOut: stderr, now: time.Now}
	root := a.command()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	code := 1
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
		if ee.err == nil {
			return code
		}
	}
	// Errors quote what the API server and tenants wrote (a rollout's Degraded message, a
	// denial): escaped as every printer escapes status.
	fmt.Fprintln(stderr, "error: "+view.Escape(strings.Join(strings.Fields(err.Error()), " ")))
	return code
}

// app holds what every command shares: the kubeconfig flags, the streams, the clock and
// the colour setting.
type app struct {
	flags       *genericclioptions.ConfigFlags
	in          io.Reader
	out, errOut io.Writer
	now         func() time.Time
	color       string
}

func (a *app) command() *cobra.Command {
	root := &cobra.Command{
		Use:   "kubectl-carto",
		Short: "See, wait for, render and lint Surveyor's supply chains",
		Long: `kubectl carto reads Workloads and Deliverables (Surveyor's owners) and their
supply chains and deliveries with your kubeconfig, and renders and lints them offline.

Exit codes: 0 success; 1 an error, or an owner that is not Ready (why, wait);
2 a wait that timed out.`,
		Annotations:   map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl carto"},
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	a.flags.AddFlags(root.PersistentFlags())
	root.PersistentFlags().StringVar(&a.color, "color", "auto", "colour statuses: auto (on a terminal, unless NO_COLOR is set), always or never")
	root.AddCommand(a.getCommand(), a.treeCommand(), a.whyCommand(), a.waitCommand(),
		a.renderCommand(), a.lintCommand(), a.testCommand(), a.rolloutCommand(), a.webCommand())
	return root
}

// options are the printers' options: the time now and whether to colour.
func (a *app) options() (view.Options, error) {
	opts := view.Options{Now: a.now()}
	switch a.color {
	case "always":
		opts.Color = true
	case "never":
	case "auto":
		f, ok := a.out.(*os.File)
		opts.Color = ok && term.IsTerminal(int(f.Fd())) && os.Getenv("NO_COLOR") == ""
	default:
		return opts, fmt.Errorf("--color must be auto, always or never, not %q", a.color)
	}
	return opts, nil
}

// cluster is a client for the cluster of the kubeconfig flags.
func (a *app) cluster() (*cluster, error) { return newCluster(a.flags) }
