package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/surveyor-dev/surveyor/pkg/manifest"
	"github.com/surveyor-dev/surveyor/pkg/view"
)

// The -o json and -o yaml outputs are encoded, but not fully for a terminal: encoding/json
// writes DEL, the C1 controls and the bidi controls as they are, and the YAML emitter
// writes the bidi controls as they are. A tenant's condition message holding U+009B (a
// C1 CSI) or U+202E would still reach the terminal. The two functions below finish the
// job with escapes each format reads back as the same string.

// escapeJSON is JSON text with every character view.Escape would escape written as a
// \uXXXX escape, line feeds aside. Such characters can only be inside strings
// (encoding/json writes nothing else outside ASCII), where \uXXXX stands for the same
// character.
func escapeJSON(b []byte) []byte {
	s := string(b)
	if view.Escape(s) == s {
		return b
	}
	var out strings.Builder
	for _, r := range s {
		// Line feeds are the indentation's, outside strings: encoding/json escapes its own.
		if r != '\n' && view.Escape(string(r)) != string(r) {
			fmt.Fprintf(&out, `\u%04x`, r)
			continue
		}
		out.WriteRune(r)
	}
	return []byte(out.String())
}

// writeYAML writes nodes as a YAML stream with every scalar that holds a character
// view.Escape would escape written double-quoted, and that character as a \uXXXX escape,
// which a double-quoted scalar reads back as the same character.
func writeYAML(w io.Writer, nodes ...*kyaml.RNode) error {
	unsafe := false
	for _, n := range nodes {
		unsafe = quoteUnsafe(n.YNode()) || unsafe
	}
	var b bytes.Buffer
	if err := manifest.Write(&b, nodes...); err != nil {
		return err
	}
	if !unsafe {
		_, err := w.Write(b.Bytes())
		return err
	}
	var out strings.Builder
	for _, r := range b.String() {
		if r != '\n' && view.Escape(string(r)) != string(r) {
			fmt.Fprintf(&out, `\u%04X`, r)
			continue
		}
		out.WriteRune(r)
	}
	_, err := io.WriteString(w, out.String())
	return err
}

// quoteUnsafe makes every scalar under n that holds a character view.Escape would escape
// double-quoted, and reports whether there was one.
func quoteUnsafe(n *kyaml.Node) bool {
	if n == nil {
		return false
	}
	found := false
	if n.Kind == kyaml.ScalarNode && view.Escape(n.Value) != n.Value {
		n.Style = kyaml.DoubleQuotedStyle
		found = true
	}
	for _, c := range n.Content {
		found = quoteUnsafe(c) || found
	}
	return found
}
