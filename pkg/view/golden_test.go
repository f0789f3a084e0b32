package view_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/surveyor-dev/surveyor/internal/golden"
	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/manifest"
	"github.com/surveyor-dev/surveyor/pkg/view"
)

// now is the fixed clock of every golden file: after every fixture was captured.
var now = time.Date(2026, 11, 23, 9, 30, 0, 0, time.UTC)

var opts = view.Options{Now: now}

// fixture is an owner of testdata/owners, named after its file.
type fixture struct {
	name  string
	owner view.Owner
}

// owners reads testdata/owners: statuses the controller wrote, captured from the corpus
// (corpus-*) and from the samples (sample-*), plus kuttl assertions (kuttl-*).
func owners(t *testing.T) []fixture {
	t.Helper()
	files, err := filepath.Glob("testdata/owners/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	slices.Sort(files)
	var out []fixture
	for _, f := range files {
		docs, err := manifest.Read(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, d := range docs {
			obj, err := d.Decode()
			if err != nil {
				t.Fatal(err)
			}
			o, ok := obj.(v1alpha1.Owner)
			if !ok {
				t.Fatalf("%s: %T is no owner", f, obj)
			}
			name := strings.TrimSuffix(filepath.Base(f), ".yaml")
			if len(docs) > 1 {
				name += fmt.Sprintf("#%d", i+1)
			}
			out = append(out, fixture{name: name, owner: view.OwnerOf(o)})
		}
	}
	return out
}

// each writes every fixture's output under a header, for one golden file per printer.
func each(t *testing.T, print func(*strings.Builder, view.Owner) error) string {
	var b strings.Builder
	for _, f := range owners(t) {
		b.WriteString("=== " + f.name + "\n")
		if err := print(&b, f.owner); err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
	}
	return b.String()
}

func TestGet(t *testing.T) {
	golden.Check(t, "testdata/get.golden", each(t, func(b *strings.Builder, o view.Owner) error { return view.PrintOwner(b, o, opts) }))
}

func TestTree(t *testing.T) {
	golden.Check(t, "testdata/tree.golden", each(t, func(b *strings.Builder, o view.Owner) error { return view.PrintTree(b, o, opts) }))
}

func TestWhy(t *testing.T) {
	golden.Check(t, "testdata/why.golden", each(t, func(b *strings.Builder, o view.Owner) error { return view.PrintWhy(b, o, opts) }))
}

func TestWait(t *testing.T) {
	outcomes := map[view.Outcome]string{view.Waiting: "waiting", view.Met: "met", view.Failed: "failed"}
	golden.Check(t, "testdata/wait.golden", each(t, func(b *strings.Builder, o view.Owner) error {
		for _, g := range view.Goals {
			fmt.Fprintf(b, "--for=%s: %s: %s\n", g, outcomes[view.Check(o, g)], view.State(o, g))
		}
		return nil
	}))
}

func TestList(t *testing.T) {
	var b strings.Builder
	for _, kind := range []string{v1alpha1.KindWorkload, v1alpha1.KindDeliverable} {
		var of []view.Owner
		for _, f := range owners(t) {
			if f.owner.Kind == kind {
				of = append(of, f.owner)
			}
		}
		for _, all := range []bool{true, false} {
			fmt.Fprintf(&b, "=== %s, all namespaces: %v\n", kind, all)
			if err := view.PrintList(&b, kind, of, view.ListOptions{Options: opts, AllNamespaces: all}); err != nil {
				t.Fatal(err)
			}
		}
	}
	golden.Check(t, "testdata/list.golden", b.String())
}

func TestRollout(t *testing.T) {
	files, err := filepath.Glob("testdata/blueprints/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no blueprint fixtures: %v", err)
	}
	slices.Sort(files)
	var b strings.Builder
	for _, f := range files {
		docs, err := manifest.Read(f)
		if err != nil {
			t.Fatal(err)
		}
		obj, err := docs[0].Decode()
		if err != nil {
			t.Fatal(err)
		}
		bp, ok := view.BlueprintOf(obj)
		if !ok {
			t.Fatalf("%s: %T is no blueprint", f, obj)
		}
		b.WriteString("=== " + strings.TrimSuffix(filepath.Base(f), ".yaml") + "\n")
		if err := view.PrintRollout(&b, bp, opts); err != nil {
			t.Fatal(err)
		}
	}
	golden.Check(t, "testdata/rollout.golden", b.String())
}
