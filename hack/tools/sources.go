package tools

import (
	"encoding/json"
	"fmt"
	"os"
)

// Source is a Go module read as files rather than built: the CRDs and examples the
// end-to-end suites install come from the module cache, so nothing of another project
// is copied into this repository.
type Source struct {
	// Module is the module path, Version its pinned version.
	Module, Version string
}

// Sources are every pinned source module, keyed by a short name.
var Sources = map[string]Source{
	// Cartographer's examples/ (tests/examples renders them with ytt).
	"cartographer": {Module: "github.com/vmware-tanzu/cartographer", Version: "v0.8.11"},
	// Flux's GitRepository CRD: v1.2.5 still serves v1beta1 (which the examples stamp)
	// beside the v1 it stores, and is a version the module proxy hands out here.
	"source-controller": {Module: "github.com/fluxcd/source-controller", Version: "v1.2.5"},
	// kpack's Image (kpack.io/v1alpha2) and the cluster-scoped builder kinds the examples apply.
	"kpack": {Module: "github.com/pivotal/kpack", Version: "v0.16.1"},
	// kapp-controller's App (kappctrl.k14s.io/v1alpha1), config/config/crds.yml.
	"kapp-controller": {Module: "github.com/vmware-tanzu/carvel-kapp-controller", Version: "v0.50.0"},
	// Tekton's Task, ClusterTask, TaskRun and PipelineRun, config/300-crds; v0.65.0 still
	// serves v1beta1 and ships ClusterTask, both of which the examples use.
	"tekton": {Module: "github.com/tektoncd/pipeline", Version: "v0.65.0"},
}

// SourceDir returns the directory of a pinned source module in the module cache,
// downloading it on first use. It runs outside any module (GOFLAGS=-mod=mod, GOWORK=off),
// so it works the same from a fresh clone.
func SourceDir(name string) (string, error) {
	src, ok := Sources[name]
	if !ok {
		return "", fmt.Errorf("unknown source module %q", name)
	}
	env := append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	out, err := output(os.TempDir(), env, "mod", "download", "-json", src.Module+"@"+src.Version)
	if err != nil {
		return "", err
	}
	var dl struct{ Dir, Error string }
	if err := json.Unmarshal(out, &dl); err != nil {
		return "", fmt.Errorf("reading go mod download output for %s: %w", src.Module, err)
	}
	if dl.Error != "" || dl.Dir == "" {
		return "", fmt.Errorf("downloading %s@%s: %s", src.Module, src.Version, dl.Error)
	}
	return dl.Dir, nil
}
