package expr

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// bracketKey matches a key in brackets and quotes at the start of text: ['app.kubernetes.io/name']
// or ["app.kubernetes.io/name"]. A quoted key ends at its first quote: there are no escapes in it.
var bracketKey = regexp.MustCompile(`^\[\s*(?:'([^']*)'|"([^"]*)")\s*\]`)

// normalize turns a path as users write it into client-go's template form. It is the one place
// that decides which spellings mean the same path:
//
//   - braces, a leading "$" and one leading dot are optional: status.x, .status.x, {.status.x},
//     {status.x} and $.status.x are all {.status.x}; a leading ".." stays recursive descent;
//   - a key in brackets and quotes is one key, whatever it holds: labels['app.kubernetes.io/name']
//     becomes labels.app\.kubernetes\.io/name, which client-go's parser would otherwise read as
//     the fields app, kubernetes and io/name; a path that starts with a bracketed key starts at
//     the root ($['metadata'] is .metadata, not ..metadata);
//   - white space around the path is dropped; filters, unions and slices are client-go's.
//
// Text that starts with "{" but is not one balanced action (such as "{.status" or
// "{.a}{.b}") is left for client-go to parse as written, so its complaint is about what the user
// wrote. normalize is idempotent.
func normalize(text string) string {
	p := trimUnescaped(text)
	if strings.HasPrefix(p, "{") {
		if !oneAction(p[1:]) {
			return rewriteBracketKeys(p)
		}
		p = trimUnescaped(p[1 : len(p)-1])
	}
	p = strings.TrimPrefix(p, "$")
	descent := strings.HasPrefix(p, "..")
	p = rewriteBracketKeys(strings.TrimPrefix(p, "."))
	switch {
	case descent:
		return "{." + p + "}"
	case strings.HasPrefix(p, "."), strings.HasPrefix(p, "["):
		// A leading ['key'] became .key; a leading [0] or [*] applies to the root.
		return "{" + p + "}"
	}
	return "{." + p + "}"
}

// rewriteBracketKeys turns each ['key'] into .key, or into key after a dot (a.['b'] is a.b, not
// the recursive descent a..b). It reads p once, from the left, following quotes: a bracket within
// quotes or after a backslash starts no key (['['0']'] is no key 0), and a rewritten key leaves
// no quote or bracket to read differently the next time.
func rewriteBracketKeys(p string) string {
	var b strings.Builder
	var q quotes
	last, afterDot := 0, false
	for i := 0; i < len(p); {
		if p[i] == '[' && !q.open() && !q.escaped {
			if m := bracketKey.FindStringSubmatchIndex(p[i:]); m != nil {
				// No field name spells an empty key: that is left for the parser to refuse.
				if key := p[i+max(m[2], m[4]) : i+max(m[3], m[5])]; key != "" {
					b.WriteString(p[last:i])
					if !afterDot {
						b.WriteByte('.')
					}
					b.WriteString(escapeField(key))
					i += m[1]
					last, afterDot = i, false
					continue
				}
			}
		}
		r, size := utf8.DecodeRuneInString(p[i:])
		afterDot = r == '.' && !q.open() && !q.escaped
		q.step(r, "")
		i += size
	}
	b.WriteString(p[last:])
	return b.String()
}

// quotes follows single and double quotes through text stepped through it in order; a
// backslash escapes the rune after it, within quotes or not.
type quotes struct {
	quote   rune
	escaped bool
}

// step follows one rune, reporting whether it is one of stops outside quotes.
func (q *quotes) step(r rune, stops string) bool {
	switch {
	case q.escaped:
		q.escaped = false
	case r == '\\':
		q.escaped = true
	case q.quote != 0:
		if r == q.quote {
			q.quote = 0
		}
	case r == '\'' || r == '"':
		q.quote = r
	case strings.ContainsRune(stops, r):
		return true
	}
	return false
}

// open reports whether the text stepped through so far ends within quotes.
func (q *quotes) open() bool { return q.quote != 0 }

// oneAction reports whether s, the text after an opening brace, closes it at its end and holds
// no other brace outside quotes: {.a} is one action; {.a}{.b}, {range .a[*]}{.b}{end}, {.a and
// {.a\} are not. Bracket keys are read as rewriteBracketKeys reads them (['a\'] is the key a\,
// which opens no quote, and ['}'] holds no brace), so that the answer is the same for s and for
// s with its keys rewritten.
func oneAction(s string) bool {
	r := rewriteBracketKeys(s)
	var q quotes
	for i, c := range r {
		if q.step(c, "{}") {
			return c == '}' && i == len(r)-1
		}
	}
	return false
}

// trimUnescaped trims white space around s but keeps a trailing one escaped with a backslash,
// which belongs to a field name (so that normalize is idempotent).
func trimUnescaped(s string) string {
	s = strings.TrimLeft(s, " \t\n\r")
	for len(s) > 0 && strings.ContainsRune(" \t\n\r", rune(s[len(s)-1])) {
		if len(s) > 1 && s[len(s)-2] == '\\' {
			break
		}
		s = s[:len(s)-1]
	}
	return s
}

// escapeField escapes the characters client-go's parser ends a field name at (its
// isTerminator: white space and line ends included), the backslash, and quotes (which
// rewriteBracketKeys would read as opening a quote). client-go drops each escaping backslash.
func escapeField(key string) string {
	var b strings.Builder
	for _, r := range key {
		switch r {
		case '.', ',', '[', ']', '$', '@', '{', '}', ' ', '\t', '\n', '\r', '\\', '\'', '"':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
