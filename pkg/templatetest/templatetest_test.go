package templatetest_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/surveyor-dev/surveyor/pkg/templatetest"
)

func TestSuite(t *testing.T) {
	cases, err := templatetest.Load("testdata/suite")
	if err != nil {
		t.Fatal(err)
	}
	results, passed := templatetest.RunAll(cases)
	if passed {
		t.Error("the suite passed with a case that stamps another object than it expects")
	}
	want := map[string]bool{ // name → passes
		"differs": false, "suite/ignore-labels": true, "suite/ignore-metadata": true, "suite/mock": true,
		"suite/params/defaults": true, "suite/params/workload": true,
	}
	if len(results) != len(want) {
		t.Fatalf("%d results, want %d", len(results), len(want))
	}
	for _, r := range results {
		passes, ok := want[r.Case.Name]
		switch {
		case !ok:
			t.Errorf("unexpected case %q", r.Case.Name)
		case r.Err != nil:
			t.Errorf("%s: %v", r.Case.Name, r.Err)
		case r.Passed() != passes:
			t.Errorf("%s: passed %t, want %t; diff:\n%s", r.Case.Name, r.Passed(), passes, r.Diff)
		}
	}
	for _, r := range results {
		if r.Case.Name == "differs" && !(strings.Contains(r.Diff, "-  port: \"9090\"\n") && strings.Contains(r.Diff, "+  port: 8080\n")) {
			t.Errorf("the diff does not show the expected 9090 against the stamped 8080:\n%s", r.Diff)
		}
	}
}

// TestFocus: only the focused case runs, and the suite fails even though it passes.
func TestFocus(t *testing.T) {
	cases, err := templatetest.Load("testdata/focus")
	if err != nil {
		t.Fatal(err)
	}
	results, passed := templatetest.RunAll(cases)
	if len(results) != 1 || results[0].Case.Name != "focus/b" || !results[0].Passed() {
		t.Fatalf("results %+v, want focus/b alone, passing", results)
	}
	if passed {
		t.Error("a focused suite passed")
	}
}

func TestLoadRefusesAMockAndARealSupplyChain(t *testing.T) {
	_, err := templatetest.Load("testdata/both")
	if err == nil || !strings.Contains(err.Error(), "only one of a mock supply chain and a real supply chain") {
		t.Errorf("err = %v", err)
	}
}

// TestSamples runs the template tests of samples/ (tests/templates).
func TestSamples(t *testing.T) {
	cases, err := templatetest.Load("../../tests/templates")
	if err != nil {
		t.Fatal(err)
	}
	results, passed := templatetest.RunAll(cases)
	for _, r := range results {
		if !r.Passed() {
			t.Errorf("%s: %v\n%s", r.Case.Name, r.Err, r.Diff)
		}
	}
	if !passed || len(results) < 6 {
		t.Errorf("%d cases, passed %t", len(results), passed)
	}
}

// A template or a supply chain kept as a ytt file is preprocessed with its data values file
// (given.template.yttPath, given.supplyChain.yttPath, or their default files), plain or
// annotated @data/values, before it is stamped.
func TestPreprocessWithYTT(t *testing.T) {
	cases, err := templatetest.Load("testdata/preprocess")
	if err != nil {
		t.Fatal(err)
	}
	results, passed := templatetest.RunAll(cases)
	if len(results) != 2 {
		t.Fatalf("%d results, want 2", len(results))
	}
	for _, r := range results {
		if !r.Passed() {
			t.Errorf("%s: %v\n%s", r.Case.Name, r.Err, r.Diff)
		}
	}
	if !passed {
		t.Error("the suite failed")
	}
}

// A data value the ytt file needs and its values file lacks fails the case with ytt's error.
func TestPreprocessError(t *testing.T) {
	cases, err := templatetest.Load("testdata/preprocess")
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(cases, func(c *templatetest.Case) bool { return c.Name == "preprocess/template" })
	if i < 0 {
		t.Fatal("no case preprocess/template")
	}
	cases = cases[i:]
	cases[0].TemplateYttValues = "testdata/preprocess/supply-chain/supply-chain-ytt-values.yaml"
	_, err = cases[0].Run()
	want := "preprocessing testdata/preprocess/template/template.yaml with ytt data values testdata/preprocess/supply-chain/supply-chain-ytt-values.yaml: ytt: Error: \n- struct has no .name field or method"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("err = %v, want it to start with %q", err, want)
	}
}
