package view

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Escape is s with every character a terminal could act on written out as Go writes it
// in a string literal: C0 controls (ESC, BEL, CR, backspace, tab, line feed), DEL, C1
// controls, the bidirectional marks, embeddings, overrides and isolates (U+061C, U+200E,
// U+200F, U+202A–U+202E, U+2066–U+2069), the line and paragraph separators (U+2028,
// U+2029), and bytes that are not UTF-8. "\x1b]52;c;...\a"
// prints as `\x1b]52;c;...\a`, not as a clipboard write.
//
// Everything the CLI prints that a tenant wrote (a condition message through
// messagePath or messageExpression, a reason, a name, an output's preview) passes
// through it: the reader's terminal must never take status for commands, and a line
// must never show something other than what it holds. Backslashes are left alone, so a
// message that spells out `\x1b` reads the same as one holding an escaped ESC: both are
// harmless, and paths and regular expressions stay readable.
func Escape(s string) string {
	i := strings.IndexFunc(s, unsafe)
	if i < 0 && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && size <= 1:
			b.WriteString(`\x` + strconv.FormatUint(uint64(s[0])|0x100, 16)[1:])
		case unsafe(r):
			// QuoteRune gives \a, \b, \t, \n, \r, \x1b, \u202e...; the quotes go.
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[:size])
		}
		s = s[size:]
	}
	return b.String()
}

// unsafe reports whether r must not reach a terminal as it is: a control character (C0,
// DEL, C1), which a terminal may execute, or a bidi control or line separator, which
// reorders or breaks the line it is on. Other invisible format characters (zero-width
// joiners, which emoji sequences need) print as themselves: they cannot move text.
func unsafe(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r < 0xa0:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	case r == 0x2028, r == 0x2029:
		return true
	}
	return false
}
