package view_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/surveyor-dev/surveyor/pkg/view"
)

func TestEscape(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain text is kept", "resource [app] is healthy", "resource [app] is healthy"},
		{"unicode is kept", "déployé ✓ 日本 👩‍👩‍👧", "déployé ✓ 日本 👩‍👩‍👧"},
		{"backslashes are kept", `C:\path \x1b`, `C:\path \x1b`},
		{"OSC 52 clipboard write", "\x1b]52;c;ZXZpbA==\a", `\x1b]52;c;ZXZpbA==\a`},
		{"CR and backspace", "bad\rgood\b\b", `bad\rgood\b\b`},
		{"tab and line feed", "a\tb\nc", `a\tb\nc`},
		{"NUL and DEL", "a\x00b\x7f", `a\x00b\x7f`},
		{"C1 CSI", "\u009b31m", `\u009b31m`},
		{"right-to-left override", "txt\u202eexe", `txt\u202eexe`},
		{"isolates and marks", "\u2066a\u2069\u200f\u061c", `\u2066a\u2069\u200f\u061c`},
		{"line separator", "a\u2028b", `a\u2028b`},
		{"invalid UTF-8", "a\xffb\xc2", `a\xffb\xc2`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := view.Escape(tc.in); got != tc.want {
				t.Errorf("Escape(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// ownColours are the only escape sequences a printer may write: its own SGR colours.
var ownColours = regexp.MustCompile(`\x1b\[(3[123]|0)m`)

// TestPrintersEscapeControlCharacters prints every fixture, the hostile ones included,
// with colours on, and fails on any control or bidi character left in the output other
// than line feeds and the printer's own colours.
func TestPrintersEscapeControlCharacters(t *testing.T) {
	colour := view.Options{Now: now, Color: true}
	out := each(t, func(b *strings.Builder, o view.Owner) error {
		for _, print := range []func(*strings.Builder, view.Owner, view.Options) error{
			func(b *strings.Builder, o view.Owner, opts view.Options) error { return view.PrintOwner(b, o, opts) },
			func(b *strings.Builder, o view.Owner, opts view.Options) error { return view.PrintTree(b, o, opts) },
			func(b *strings.Builder, o view.Owner, opts view.Options) error { return view.PrintWhy(b, o, opts) },
			func(b *strings.Builder, o view.Owner, opts view.Options) error {
				return view.PrintList(b, o.Kind, []view.Owner{o}, view.ListOptions{Options: opts, AllNamespaces: true})
			},
		} {
			if err := print(b, o, colour); err != nil {
				return err
			}
		}
		for _, g := range view.Goals {
			b.WriteString(view.State(o, g) + "\n")
		}
		return nil
	})
	if !strings.Contains(out, `\x1b]52;c;`) {
		t.Fatal("the hostile fixture is not among the owners")
	}
	rest := ownColours.ReplaceAllString(out, "")
	for i, r := range rest {
		if r != '\n' && view.Escape(string(r)) != string(r) {
			t.Fatalf("%U left unescaped in the output at %d: %q", r, i, rest[max(0, i-40):min(len(rest), i+40)])
		}
	}
}
