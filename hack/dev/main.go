// Command dev drives Surveyor's development loop on the local cluster of hack/cluster.
//
//	dev tool [NAME...]               print each tool binary's path (default: all), building it once per machine;
//	                                 independent tools build side by side (-j, default 3)
//	dev up                           start the cluster with the CRDs installed; wait for Ctrl-C
//	dev run   -controller BIN        cluster, CRDs, RBAC, the controller, samples/; watch the owners
//	dev kuttl -controller BIN [ARGS] the same without samples, then kubectl-kuttl test ARGS
//	                                 (with kubectl and bin/, where kubectl-carto is, on PATH)
//	dev image [-layout DIR]          the controller's image (hack/image): pushed to $KO_DOCKER_REPO
//	                                 when set, else an OCI layout in DIR (dist/image); prints its digest
//	dev release [-o FILE]            the image, then config/default rendered with it pinned by digest
//	                                 (hack/release) into FILE (dist/surveyor.yaml)
//	dev step -dir DIR NAME -- CMD... run CMD as one step of make test: output in DIR/NAME.log,
//	                                 its time in DIR/NAME.time; prints the log when it fails
//	dev times -dir DIR               the table of seconds per step that make test ends with
//
// It is run from the repository root (the Makefile does so).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/surveyor-dev/surveyor/hack/cluster"
	"github.com/surveyor-dev/surveyor/hack/image"
	"github.com/surveyor-dev/surveyor/hack/release"
	"github.com/surveyor-dev/surveyor/hack/tools"
)

const (
	controllerNamespace = "surveyor-system"
	controllerAccount   = "surveyor-controller"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "dev:", err)
		os.Exit(1)
	}
}

func run() error {
	if len(os.Args) < 2 {
		return errors.New("usage: dev tool|up|run|kuttl|image|release|step|times [ARG...]")
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	controller := fs.String("controller", "bin/surveyor", "path of the built controller binary")
	dir := fs.String("dir", "", "working directory for the cluster (default: a temporary one)")
	layout := fs.String("layout", "dist/image", "image, release: the OCI layout written when KO_DOCKER_REPO is not set")
	output := fs.String("o", "dist/surveyor.yaml", "release: the manifest to write")
	jobs := fs.Int("j", 3, "tool: how many tools build at once")
	_ = fs.Parse(os.Args[2:])

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	switch os.Args[1] {
	case "tool":
		names := fs.Args()
		if len(names) == 0 {
			names = tools.Names()
		}
		paths, err := tools.Paths(names, *jobs, os.Stderr)
		for _, path := range paths {
			fmt.Println(path)
		}
		return err
	case "step":
		if fs.NArg() < 1 {
			return errors.New("usage: dev step -dir DIR NAME -- CMD [ARGS...]")
		}
		argv := fs.Args()[1:]
		if len(argv) > 0 && argv[0] == "--" {
			argv = argv[1:]
		}
		return runStep(*dir, fs.Arg(0), argv)
	case "times":
		return summarize(*dir)
	case "up":
		c, err := start(ctx, *dir, "")
		if err != nil {
			return err
		}
		defer c.Stop()
		fmt.Printf("cluster up; export KUBECONFIG=%s (Ctrl-C stops it)\n", c.Kubeconfig)
		<-ctx.Done()
		return nil
	case "run":
		return runSamples(ctx, *dir, *controller)
	case "kuttl":
		return runKuttl(ctx, *dir, *controller, fs.Args())
	case "image":
		ref, err := image.Build(ctx, image.Options{Repo: os.Getenv("KO_DOCKER_REPO"), Layout: *layout, Log: os.Stderr})
		if err != nil {
			return err
		}
		fmt.Println(ref)
		return nil
	case "release":
		repo := os.Getenv("KO_DOCKER_REPO")
		ref, err := image.Build(ctx, image.Options{Repo: repo, Layout: *layout, Log: os.Stderr})
		if err != nil {
			return err
		}
		if repo == "" { // the layout's image, to be pushed where the manifest says
			ref = image.DefaultRepo + "@" + ref
		}
		manifest, err := release.Render("config/default", ref)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(*output), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(*output, manifest, 0o644); err != nil {
			return err
		}
		fmt.Printf("%s: the controller's image is %s\n", *output, ref)
		return nil
	}
	return fmt.Errorf("unknown command %q", os.Args[1])
}

// start brings up the cluster with the CRDs and, when controller is set, the
// controller's RBAC and the controller itself, running as its own ServiceAccount.
func start(ctx context.Context, dir, controller string) (_ *cluster.Cluster, err error) {
	if dir != "" {
		if err := os.RemoveAll(dir); err != nil {
			return nil, err
		}
	}
	c, err := cluster.Start(ctx, cluster.Options{Dir: dir, Log: os.Stderr, Install: []string{"config/crd/bases", "config/rbac"}})
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			c.Stop()
		}
	}()
	if controller == "" {
		return c, nil
	}
	kubeconfig, err := c.ServiceAccountKubeconfig(ctx, controllerNamespace, controllerAccount)
	if err != nil {
		return nil, err
	}
	probe, err := cluster.FreePort()
	if err != nil {
		return nil, err
	}
	if err := c.Launch(ctx, "surveyor", controller,
		"--kubeconfig="+kubeconfig,
		"--leader-elect", "--leader-election-namespace="+controllerNamespace,
		"--metrics-bind-address=0",
		"--health-probe-bind-address=127.0.0.1:"+strconv.Itoa(probe),
	); err != nil {
		return nil, err
	}
	readyz := "http://127.0.0.1:" + strconv.Itoa(probe) + "/readyz"
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		resp, err := http.Get(readyz)
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		return nil, fmt.Errorf("controller never became ready (see %s): %w", c.LogPath("surveyor"), err)
	}
	fmt.Fprintf(os.Stderr, "controller running as %s/%s; logs in %s\n", controllerNamespace, controllerAccount, c.LogPath("surveyor"))
	return c, nil
}

func runSamples(ctx context.Context, dir, controller string) error {
	if dir == "" {
		dir = ".run"
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	c, err := start(ctx, dir, controller)
	if err != nil {
		return err
	}
	defer c.Stop()
	if err := cluster.Apply(ctx, c.Config, "samples"); err != nil {
		return fmt.Errorf("applying samples/: %w", err)
	}
	kubectl, err := tools.Path("kubectl", os.Stderr)
	if err != nil {
		return err
	}
	fmt.Printf("\nsamples applied. In another shell: export KUBECONFIG=%s\n", c.Kubeconfig)
	fmt.Printf("in a browser: KUBECONFIG=%s bin/kubectl-carto web, then open http://127.0.0.1:8080/\n", c.Kubeconfig)
	fmt.Printf("watching: kubectl get workloads -A --watch and kubectl get deliverables -A --watch (Ctrl-C stops everything)\n\n")
	// kubectl watches one resource type at a time, so each owner kind has its own watch.
	errs := make(chan error, 2)
	for _, resource := range []string{"workloads", "deliverables"} {
		watch := exec.CommandContext(ctx, kubectl, "get", resource, "--all-namespaces", "--watch")
		watch.Env = append(os.Environ(), "KUBECONFIG="+c.Kubeconfig)
		watch.Stdout, watch.Stderr = os.Stdout, os.Stderr
		go func() {
			if err := watch.Run(); err != nil && ctx.Err() == nil {
				errs <- fmt.Errorf("kubectl get %s: %w", resource, err)
				return
			}
			errs <- nil
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			return err
		}
	}
	fmt.Fprintln(os.Stderr, "\nstopping the controller and the cluster")
	return nil
}

func runKuttl(ctx context.Context, dir, controller string, args []string) error {
	kuttl, err := tools.Path("kubectl-kuttl", os.Stderr)
	if err != nil {
		return err
	}
	kubectl, err := tools.Path("kubectl", os.Stderr)
	if err != nil {
		return err
	}
	c, err := start(ctx, dir, controller)
	if err != nil {
		return err
	}
	defer c.Stop()
	// kuttl writes ./kubeconfig into its working directory and points test steps at
	// it, so each run works in its own cluster's directory (with the suites linked
	// in) and parallel runs from one checkout cannot cross-wire.
	repo, err := os.Getwd()
	if err != nil {
		return err
	}
	if err := os.Symlink(filepath.Join(repo, "tests"), filepath.Join(c.Dir, "tests")); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, kuttl, append([]string{"test"}, args...)...)
	cmd.Dir = c.Dir
	// kuttl reads KUBECONFIG; test steps that run commands find kubectl on PATH, and
	// the plugin `make build` put in bin/, so that `kubectl carto` runs the one built here.
	path := filepath.Dir(kubectl) + ":" + filepath.Join(repo, "bin") + ":" + os.Getenv("PATH")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+c.Kubeconfig, "PATH="+path)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		// The cluster's directory goes with it, so show the controller's log now.
		if log, readErr := os.ReadFile(c.LogPath("surveyor")); readErr == nil {
			fmt.Fprintf(os.Stderr, "\n--- controller log ---\n%s\n", tail(log, 200))
		}
		return fmt.Errorf("kuttl: %w", err)
	}
	return nil
}

// tail returns the last n lines of b.
func tail(b []byte, n int) []byte {
	for i := len(b) - 2; i >= 0; i-- {
		if b[i] == '\n' {
			if n--; n == 0 {
				return b[i+1:]
			}
		}
	}
	return b
}
