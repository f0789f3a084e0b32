package crd_test

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/surveyor-dev/surveyor/hack/tools"
)

// moduleRoot is the repository root, seen from this package's directory (where go test runs it).
const moduleRoot = "../.."

// TestGeneratedFilesAreCurrent regenerates the CRDs (config/crd/bases) and the deepcopy code
// (pkg/apis/**/zz_generated.deepcopy.go) from the API types, with the pinned controller-gen and the
// arguments of the Makefile's manifests and generate targets, into a temporary directory, and fails
// on any difference from the committed files, byte for byte. A field's doc comment is its CRD
// description, so a reworded comment or a struct shared between two kinds whose docs differ changes
// a CRD; this says so under `go test ./config/...`, not only under `make verify`.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	var log bytes.Buffer
	controllerGen, err := tools.Path("controller-gen", &log) // builds it on a fresh machine, as `bin/dev tool` does
	if err != nil {
		t.Fatalf("controller-gen: %v\n%s", err, log.String())
	}
	// controller-gen reads the API's sources in another process, which go test's result cache
	// does not see; reading them here makes an edit to any of them run this test again.
	apiDirs := readTree(t, filepath.Join(moduleRoot, "pkg", "apis"))
	readTree(t, filepath.Join(moduleRoot, "config", "crd", "bases"))
	for _, f := range []string{"go.mod", "go.sum"} {
		if _, err := os.ReadFile(filepath.Join(moduleRoot, f)); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("crds", func(t *testing.T) {
		out := t.TempDir()
		run(t, controllerGen, "crd", "paths=./pkg/apis/...", "output:crd:artifacts:config="+out)
		compareDirs(t, out, filepath.Join(moduleRoot, "config", "crd", "bases"), "make manifests")
	})
	t.Run("deepcopy", func(t *testing.T) {
		// One run a package: the object generator names every package's file the same.
		for _, dir := range apiDirs {
			out := t.TempDir()
			run(t, controllerGen, "object", "paths=./"+filepath.ToSlash(dir), "output:object:dir="+out)
			generated := filepath.Join(out, "zz_generated.deepcopy.go")
			committed := filepath.Join(moduleRoot, dir, "zz_generated.deepcopy.go")
			if !exists(t, generated) && !exists(t, committed) {
				continue // a package of no types with deepcopy markers
			}
			compareFiles(t, generated, committed, "make generate")
		}
	})
}

// readTree reads every file below root and returns, relative to the module root, the
// directories holding non-test Go files.
func readTree(t *testing.T, root string) []string {
	t.Helper()
	var goDirs []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if _, err := os.ReadFile(path); err != nil {
			return err
		}
		if strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			rel, err := filepath.Rel(moduleRoot, filepath.Dir(path))
			if err != nil {
				return err
			}
			if !slices.Contains(goDirs, rel) {
				goDirs = append(goDirs, rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return goDirs
}

func exists(t *testing.T, path string) bool {
	t.Helper()
	_, err := os.Stat(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return err == nil
}

func run(t *testing.T, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = moduleRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
	}
}

// compareDirs fails unless the two directories hold the same file names with the same bytes.
func compareDirs(t *testing.T, generated, committed, fix string) {
	t.Helper()
	names := func(dir string) []string {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range entries {
			out = append(out, e.Name())
		}
		return out
	}
	want, have := names(generated), names(committed)
	for _, n := range want {
		if !slices.Contains(have, n) {
			t.Errorf("%s: generated but not committed; run %s and commit it", filepath.Join(committed, n), fix)
		}
	}
	for _, n := range have {
		if !slices.Contains(want, n) {
			t.Errorf("%s: committed but no longer generated; remove it", filepath.Join(committed, n))
		}
	}
	for _, n := range want {
		if slices.Contains(have, n) {
			compareFiles(t, filepath.Join(generated, n), filepath.Join(committed, n), fix)
		}
	}
}

// compareFiles fails, naming the first line that differs, unless the two files are the same bytes.
func compareFiles(t *testing.T, generated, committed, fix string) {
	t.Helper()
	g, err := os.ReadFile(generated)
	if err != nil {
		t.Fatalf("%v: %s was committed but is no longer generated; remove it", err, committed)
	}
	c, err := os.ReadFile(committed)
	if err != nil {
		t.Fatalf("%v; run %s and commit the result", err, fix)
	}
	if !bytes.Equal(g, c) {
		t.Errorf("%s is not what the API types generate (run %s and commit the result, or undo the change to pkg/apis):\n%s",
			committed, fix, firstDifference(g, c))
	}
}

// firstDifference describes the first line at which generated and committed differ.
func firstDifference(generated, committed []byte) string {
	g, c := strings.Split(string(generated), "\n"), strings.Split(string(committed), "\n")
	for i := 0; i < max(len(g), len(c)); i++ {
		line := func(lines []string) string {
			if i < len(lines) {
				return fmt.Sprintf("%q", lines[i])
			}
			return "(end of file)"
		}
		if i >= len(g) || i >= len(c) || g[i] != c[i] {
			return fmt.Sprintf("line %d\n  generated: %s\n  committed: %s", i+1, line(g), line(c))
		}
	}
	return "the files differ only in their last bytes"
}
