// Package tools builds the binaries Surveyor's development loop needs (etcd, the
// Kubernetes control plane, kwok, kuttl, controller-gen, ko) from the Go module proxy and
// caches them outside the repository, so a machine with only Go can run everything.
//
// Every version is pinned in this file and nowhere else.
package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
)

// Tool is one Go module whose main packages are built into a cached directory.
type Tool struct {
	// Module is the module path, Version its pinned version.
	Module, Version string
	// Binaries maps each binary name to the package that builds it.
	Binaries map[string]string
	// Toolchain, when set, is the GOTOOLCHAIN used to build (kuttl needs go1.25).
	Toolchain string
	// Staging replaces every k8s.io staging module with the release matching Version,
	// which is how k8s.io/kubernetes must be consumed as a dependency.
	Staging bool
}

// Tools are every pinned tool, keyed by a short name that also names the cache directory.
var Tools = map[string]Tool{
	"kubernetes": {
		Module:  "k8s.io/kubernetes",
		Version: "v1.33.4",
		Binaries: map[string]string{
			"kube-apiserver":          "k8s.io/kubernetes/cmd/kube-apiserver",
			"kube-controller-manager": "k8s.io/kubernetes/cmd/kube-controller-manager",
			"kube-scheduler":          "k8s.io/kubernetes/cmd/kube-scheduler",
			"kubectl":                 "k8s.io/kubernetes/cmd/kubectl",
		},
		Staging: true,
	},
	"etcd": {
		Module:   "go.etcd.io/etcd/server/v3",
		Version:  "v3.6.5",
		Binaries: map[string]string{"etcd": "go.etcd.io/etcd/server/v3"},
	},
	"kwok": {
		Module:   "sigs.k8s.io/kwok",
		Version:  "v0.7.0",
		Binaries: map[string]string{"kwok": "sigs.k8s.io/kwok/cmd/kwok"},
	},
	"kuttl": {
		// v0.22.0 is in the checksum database (v0.24.0 is not), and Go 1.26 breaks
		// kuttl's testing.MainStart hook, hence the older toolchain.
		Module:    "github.com/kudobuilder/kuttl",
		Version:   "v0.22.0",
		Binaries:  map[string]string{"kubectl-kuttl": "github.com/kudobuilder/kuttl/cmd/kubectl-kuttl"},
		Toolchain: "go1.25.5",
	},
	"ytt": {
		// The ytt binary, as Cartographer runs it per stamp: the benchmark that measures
		// Surveyor's in-process evaluation against it, the test that checks the two print the
		// same, and tests/examples, which renders Cartographer's examples as their READMEs
		// say. Its version is the library's in go.mod.
		Module:   "carvel.dev/ytt",
		Version:  "v0.52.0",
		Binaries: map[string]string{"ytt": "carvel.dev/ytt/cmd/ytt"},
	},
	"ko": {
		// Builds the controller's image without Docker (hack/image, make image).
		Module:   "github.com/google/ko",
		Version:  "v0.18.1",
		Binaries: map[string]string{"ko": "github.com/google/ko"},
	},
	"controller-gen": {
		Module:   "sigs.k8s.io/controller-tools",
		Version:  "v0.19.0",
		Binaries: map[string]string{"controller-gen": "sigs.k8s.io/controller-tools/cmd/controller-gen"},
	},
	"golangci-lint": {
		// Built with this machine's Go (1.26), as a linter must be at least as new as the
		// go line of the module it loads; make lint runs it with .golangci.yml.
		Module:   "github.com/golangci/golangci-lint/v2",
		Version:  "v2.15.0",
		Binaries: map[string]string{"golangci-lint": "github.com/golangci/golangci-lint/v2/cmd/golangci-lint"},
	},
}

// CacheDir is where built tools live: $SURVEYOR_TOOLS_DIR, else <user cache>/surveyor/tools.
func CacheDir() (string, error) {
	if dir := os.Getenv("SURVEYOR_TOOLS_DIR"); dir != "" {
		return dir, nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("finding the user cache directory: %w", err)
	}
	return filepath.Join(base, "surveyor", "tools"), nil
}

// Path returns the path of a binary, building its tool first when the cache lacks it.
// Build output goes to log. Concurrent callers (parallel test packages) wait on a
// file lock, so each tool is built once per machine.
func Path(binary string, log io.Writer) (string, error) {
	name, tool, ok := find(binary)
	if !ok {
		return "", fmt.Errorf("unknown tool binary %q", binary)
	}
	cache, err := CacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, name+"-"+tool.Version)
	bin := filepath.Join(dir, binary)
	if complete(dir, tool) {
		return bin, nil
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", err
	}
	unlock, err := lock(filepath.Join(cache, "."+name+".lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	if complete(dir, tool) { // built by whoever held the lock before us
		return bin, nil
	}
	fmt.Fprintf(log, "building %s %s into %s (first run only)\n", tool.Module, tool.Version, dir)
	if err := build(cache, dir, tool, log); err != nil {
		return "", fmt.Errorf("building %s %s: %w", tool.Module, tool.Version, err)
	}
	return bin, nil
}

// Paths is Path for each of binaries, in their order. Tools build side by side, at most
// jobs at a time: each build is mostly one go build that keeps both cores busy only while
// it compiles, and resolving modules, downloading a toolchain (kuttl's) and linking leave
// them idle, so a few at once fill the gaps (a fresh machine's tools took 22 minutes one
// after another). Each go build runs up to GOMAXPROCS compilers, so at most jobs x
// GOMAXPROCS compile at once: a bound for the machine's memory, not only its cores.
func Paths(binaries []string, jobs int, log io.Writer) ([]string, error) {
	paths := make([]string, len(binaries))
	errs := make([]error, len(binaries))
	// One worker per tool, not per binary: a tool's binaries build together.
	byTool := map[string][]int{}
	var order []string
	for i, b := range binaries {
		name, _, ok := find(b)
		if !ok {
			errs[i] = fmt.Errorf("unknown tool binary %q", b)
			continue
		}
		if _, seen := byTool[name]; !seen {
			order = append(order, name)
		}
		byTool[name] = append(byTool[name], i)
	}
	sem := make(chan struct{}, max(1, jobs))
	var wg sync.WaitGroup
	for _, name := range order {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			for _, i := range byTool[name] {
				paths[i], errs[i] = Path(binaries[i], log)
			}
		}()
	}
	wg.Wait()
	return paths, errors.Join(errs...)
}

// Names lists every binary the tools provide, sorted.
func Names() []string {
	var names []string
	for _, t := range Tools {
		for b := range t.Binaries {
			names = append(names, b)
		}
	}
	slices.Sort(names)
	return names
}

func find(binary string) (string, Tool, bool) {
	for name, t := range Tools {
		if _, ok := t.Binaries[binary]; ok {
			return name, t, true
		}
	}
	return "", Tool{}, false
}

func complete(dir string, tool Tool) bool {
	for b := range tool.Binaries {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			return false
		}
	}
	return true
}

// build resolves the tool in a throwaway module and compiles all of its binaries into a
// staging directory that is renamed into place, so an interrupted build leaves no half tool.
func build(cache, dir string, tool Tool, log io.Writer) error {
	work, err := os.MkdirTemp(cache, ".build-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)

	env := append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	if tool.Toolchain != "" {
		env = append(env, "GOTOOLCHAIN="+tool.Toolchain)
	}
	gomod := "module surveyor.local/tools\n\ngo 1.24.0\n"
	if tool.Staging {
		replaces, err := stagingReplaces(work, tool, env)
		if err != nil {
			return err
		}
		gomod += replaces
	}
	if err := os.WriteFile(filepath.Join(work, "go.mod"), []byte(gomod), 0o644); err != nil {
		return err
	}
	var pkgs []string
	for _, p := range tool.Binaries {
		pkgs = append(pkgs, p)
	}
	slices.Sort(pkgs)
	pkgs = slices.Compact(pkgs)
	get := []string{"get"}
	for _, p := range pkgs {
		get = append(get, p+"@"+tool.Version)
	}
	// Resolution is noisy and only interesting when it fails, which output reports.
	if _, err := output(work, env, get...); err != nil {
		return err
	}
	out := filepath.Join(work, "bin")
	// Binaries named after their package build in one go build into out/, which compiles
	// their shared packages once and links them side by side (kubernetes' four); the others
	// one by one, each under its own name.
	var together []string
	for b, p := range tool.Binaries {
		if path.Base(p) == b {
			together = append(together, p)
			continue
		}
		if err := run(work, env, log, "build", "-ldflags=-s -w", "-o", filepath.Join(out, b), p); err != nil {
			return err
		}
	}
	if len(together) > 0 {
		slices.Sort(together)
		args := append([]string{"build", "-ldflags=-s -w", "-o", out + string(filepath.Separator)}, together...)
		if err := run(work, env, log, args...); err != nil {
			return err
		}
	}
	_ = os.RemoveAll(dir)
	return os.Rename(out, dir)
}

// stagingReplaces reads k8s.io/kubernetes' own go.mod and pins each module it
// replaces with ./staging/src/... to the published v0.<minor>.<patch> release.
func stagingReplaces(work string, tool Tool, env []string) (string, error) {
	var dl struct{ GoMod string }
	out, err := output(work, env, "mod", "download", "-json", tool.Module+"@"+tool.Version)
	if err != nil {
		return "", err
	}
	if err := json.Unmarshal(out, &dl); err != nil {
		return "", fmt.Errorf("reading go mod download output: %w", err)
	}
	out, err = output(work, env, "mod", "edit", "-json", dl.GoMod)
	if err != nil {
		return "", err
	}
	var mod struct {
		Replace []struct {
			Old struct{ Path string }
			New struct{ Path string }
		}
	}
	if err := json.Unmarshal(out, &mod); err != nil {
		return "", fmt.Errorf("reading %s: %w", dl.GoMod, err)
	}
	staging := "v0" + strings.TrimPrefix(tool.Version, "v1")
	var b strings.Builder
	b.WriteString("\nreplace (\n")
	for _, r := range mod.Replace {
		if strings.HasPrefix(r.New.Path, "./staging/") {
			fmt.Fprintf(&b, "\t%s => %s %s\n", r.Old.Path, r.Old.Path, staging)
		}
	}
	b.WriteString(")\n")
	return b.String(), nil
}

func run(dir string, env []string, log io.Writer, args ...string) error {
	cmd := exec.Command("go", args...)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, env, log, log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go %s: %w", strings.Join(args, " "), err)
	}
	return nil
}

func output(dir string, env []string, args ...string) ([]byte, error) {
	var stderr bytes.Buffer
	cmd := exec.Command("go", args...)
	cmd.Dir, cmd.Env, cmd.Stderr = dir, env, &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return out, nil
}

// lock takes an exclusive advisory lock on path, waiting for any other holder.
func lock(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		_ = f.Close() // a lock file: nothing was written to it
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		_ = f.Close()
	}, nil
}
