package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	sigsyaml "sigs.k8s.io/yaml"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/manifest"
	"github.com/surveyor-dev/surveyor/pkg/view"
)

// hostile is the Workload of pkg/view's hostile fixture: escape sequences in its name,
// image, messages, reasons and outputs.
func hostile(t *testing.T) *v1alpha1.Workload {
	t.Helper()
	docs, err := manifest.Read("../../pkg/view/testdata/owners/hostile-control-characters.yaml")
	if err != nil {
		t.Fatal(err)
	}
	obj, err := docs[0].Decode()
	if err != nil {
		t.Fatal(err)
	}
	return obj.(*v1alpha1.Workload)
}

// unescaped fails the test on any character in out, line feeds aside, that view.Escape
// would escape.
func unescaped(t *testing.T, what, out string) {
	t.Helper()
	for i, r := range out {
		if r != '\n' && view.Escape(string(r)) != string(r) {
			t.Fatalf("%s: %U left as it is at %d: %q", what, r, i, out[max(0, i-30):min(len(out), i+30)])
		}
	}
}

// -o json and -o yaml leave no control or bidi character for the terminal, and still
// read back as the same object.
func TestObjectOutputsEscapeControlCharacters(t *testing.T) {
	for _, output := range []string{"json", "yaml"} {
		t.Run(output, func(t *testing.T) {
			w := hostile(t)
			var b bytes.Buffer
			a := &app{out: &b}
			if err := a.printObjects([]v1alpha1.Object{w.DeepCopy()}, workloads, output); err != nil {
				t.Fatal(err)
			}
			unescaped(t, "-o "+output, b.String())
			var back v1alpha1.Workload
			var err error
			if output == "json" {
				err = json.Unmarshal(b.Bytes(), &back)
			} else {
				err = sigsyaml.Unmarshal(b.Bytes(), &back)
			}
			if err != nil {
				t.Fatal(err)
			}
			if got, want := back.Status.Conditions[2].Message, w.Status.Conditions[2].Message; got != want || back.Name != w.Name {
				t.Errorf("read back as name %q, message %q; want %q, %q", back.Name, got, w.Name, want)
			}
		})
	}
}

// render's comments quote tenants' text: a carriage return must not end a comment.
func TestCommentLinesEscapeControlCharacters(t *testing.T) {
	got := commentLines([]string{"not rendered: Ready False Bad: a\rkind: Secret\x1b]52;c;x\a\u0085b\u202e"})
	want := `not rendered: Ready False Bad: a kind: Secret\x1b]52;c;x\a b\u202e`
	if len(got) != 1 || got[0] != want {
		t.Errorf("commentLines = %q, want %q", got, want)
	}
	unescaped(t, "comment", strings.Join(got, "\n"))
}
