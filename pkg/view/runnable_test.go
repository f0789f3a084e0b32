package view_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/surveyor-dev/surveyor/internal/golden"
	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/manifest"
	"github.com/surveyor-dev/surveyor/pkg/view"
)

// runnables reads testdata/runnables, by file name.
func runnables(t *testing.T) ([]string, []view.Runnable) {
	t.Helper()
	files, err := filepath.Glob("testdata/runnables/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no runnable fixtures: %v", err)
	}
	slices.Sort(files)
	var names []string
	var out []view.Runnable
	for _, f := range files {
		docs, err := manifest.Read(f)
		if err != nil {
			t.Fatal(err)
		}
		obj, err := docs[0].Decode()
		if err != nil {
			t.Fatal(err)
		}
		r, ok := obj.(*v1alpha1.Runnable)
		if !ok {
			t.Fatalf("%s: %T is no Runnable", f, obj)
		}
		names = append(names, strings.TrimSuffix(filepath.Base(f), ".yaml"))
		out = append(out, view.RunnableOf(r))
	}
	return names, out
}

func TestRunnable(t *testing.T) {
	names, rs := runnables(t)
	var b strings.Builder
	for i, r := range rs {
		b.WriteString("=== " + names[i] + "\n")
		if err := view.PrintRunnable(&b, r, opts); err != nil {
			t.Fatal(err)
		}
	}
	golden.Check(t, "testdata/runnable.golden", b.String())
}

func TestRunnables(t *testing.T) {
	_, rs := runnables(t)
	var b strings.Builder
	for _, all := range []bool{true, false} {
		b.WriteString("=== all namespaces: " + map[bool]string{true: "true", false: "false"}[all] + "\n")
		if err := view.PrintRunnables(&b, rs, view.ListOptions{Options: opts, AllNamespaces: all}); err != nil {
			t.Fatal(err)
		}
	}
	golden.Check(t, "testdata/runnables.golden", b.String())
}
