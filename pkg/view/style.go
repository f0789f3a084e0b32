package view

import (
	"strings"
	"time"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
)

// Options are what a printer takes from its caller, so that printing stays a function of
// its input.
type Options struct {
	// Now is the time ages are counted to.
	Now time.Time
	// Color marks statuses with ANSI colours: True green, False red, Unknown yellow.
	Color bool
}

// ANSI colours of statuses.
const (
	green  = "\x1b[32m"
	red    = "\x1b[31m"
	yellow = "\x1b[33m"
	reset  = "\x1b[0m"
)

// Span is a piece of printed text and the condition status it shows, "" for plain text:
// a terminal printer colours it (True green, False red, any other yellow), the web view
// gives it a class.
type Span struct {
	Text   string
	Status metav1.ConditionStatus
}

// text is a piece of output made of spans.
type text []Span

func plain(s string) text { return text{{Text: s}} }

// statusText is a condition status, marked as one.
func statusText(s metav1.ConditionStatus) text { return text{{string(s), s}} }

// color is the ANSI colour of a span's status, "" for plain text.
func (sp Span) color() string {
	switch sp.Status {
	case "":
		return ""
	case metav1.ConditionTrue:
		return green
	case metav1.ConditionFalse:
		return red
	}
	return yellow
}

// join is the non-empty texts separated by spaces.
func join(ts ...text) text {
	var out text
	for _, t := range ts {
		if t.width() == 0 {
			continue
		}
		if len(out) > 0 {
			out = append(out, Span{Text: " "})
		}
		out = append(out, t...)
	}
	return out
}

// render is the text for a terminal: every span escaped (see Escape), since spans carry
// what tenants wrote, then coloured. Escaping here, where all text is printed, rather
// than where each field is read, leaves no field to forget.
func (t text) render(color bool) string {
	var b strings.Builder
	for _, sp := range t {
		if c := sp.color(); color && c != "" && sp.Text != "" {
			b.WriteString(c + Escape(sp.Text) + reset)
		} else {
			b.WriteString(Escape(sp.Text))
		}
	}
	return b.String()
}

// width is how many characters render prints, colour codes aside.
func (t text) width() int {
	n := 0
	for _, sp := range t {
		n += utf8.RuneCountInString(Escape(sp.Text))
	}
	return n
}

// Age is how long ago t was, as kubectl prints it (5m, 3h2m, 12d), or "-" for no time.
func (o Options) Age(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return duration.HumanDuration(o.Now.Sub(t))
}
