// Package layout checks the shape DESIGN §1 gives the code: the pure packages import no
// client, and the kubectl plugin links no controller manager.
package layout

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// deps are the packages pkg (and everything it imports) is built from.
func deps(t *testing.T, pkg string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "github.com/surveyor-dev/surveyor/"+pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	return strings.Fields(string(out))
}

// clientless says whether a package is no client: client-go's jsonpath (and the template
// package it is built on) are the only parts of client-go a pure package may use.
func clientless(dep string) bool {
	switch {
	case strings.HasPrefix(dep, "sigs.k8s.io/controller-runtime"):
		return false
	case strings.HasPrefix(dep, "k8s.io/client-go/"):
		return dep == "k8s.io/client-go/util/jsonpath" || dep == "k8s.io/client-go/third_party/forked/golang/template"
	}
	return true
}

func TestPurePackagesImportNoClient(t *testing.T) {
	for _, pkg := range []string{"pkg/health", "pkg/expr", "pkg/render", "pkg/render/ytt", "pkg/rollout", "pkg/view", "pkg/workitems"} {
		for _, dep := range deps(t, pkg) {
			if !clientless(dep) {
				t.Errorf("%s imports %s", pkg, dep)
			}
		}
	}
}

func TestPluginLinksNoControllerManager(t *testing.T) {
	all := deps(t, "cmd/kubectl-carto")
	if i := slices.IndexFunc(all, func(d string) bool { return strings.HasPrefix(d, "sigs.k8s.io/controller-runtime/pkg/manager") }); i >= 0 {
		t.Errorf("cmd/kubectl-carto links %s", all[i])
	}
	if slices.Contains(all, "github.com/surveyor-dev/surveyor/pkg/realizer") {
		t.Error("cmd/kubectl-carto links pkg/realizer: render and lint go through pkg/render")
	}
}

// The controller links none of ytt's workspace: its schema package formats errors with
// text/template, whose reflective calls make the linker keep every exported method of every
// reachable type (the binary's text grows by 18 MB, the controller's RSS by about 9 MiB;
// docs/ytt.md). pkg/render/ytt evaluates a template without it; the CLI's template tests use
// it to preprocess files.
func TestControllerLinksNoYTTWorkspace(t *testing.T) {
	for _, dep := range deps(t, "cmd/surveyor") {
		if strings.HasPrefix(dep, "carvel.dev/ytt/pkg/workspace") || strings.HasPrefix(dep, "carvel.dev/ytt/pkg/schema") || strings.HasPrefix(dep, "carvel.dev/ytt/pkg/cmd/template") {
			t.Errorf("cmd/surveyor links %s", dep)
		}
	}
}
