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

// text is a piece of output made of spans, each printed in its colour when colours are
// on.
type text []span

type span struct {
	s     string
	color string
}

func plain(s string) text { return text{{s: s}} }

// statusText is a condition status in its colour.
func statusText(s metav1.ConditionStatus) text {
	switch s {
	case metav1.ConditionTrue:
		return text{{string(s), green}}
	case metav1.ConditionFalse:
		return text{{string(s), red}}
	}
	return text{{string(s), yellow}}
}

// join is the non-empty texts separated by spaces.
func join(ts ...text) text {
	var out text
	for _, t := range ts {
		if t.width() == 0 {
			continue
		}
		if len(out) > 0 {
			out = append(out, span{s: " "})
		}
		out = append(out, t...)
	}
	return out
}

func (t text) render(color bool) string {
	var b strings.Builder
	for _, sp := range t {
		if color && sp.color != "" && sp.s != "" {
			b.WriteString(sp.color + sp.s + reset)
		} else {
			b.WriteString(sp.s)
		}
	}
	return b.String()
}

func (t text) width() int {
	n := 0
	for _, sp := range t {
		n += utf8.RuneCountInString(sp.s)
	}
	return n
}

// age is how long ago t was, as kubectl prints it (5m, 3h2m, 12d), or "-" for no time.
func (o Options) age(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return duration.HumanDuration(o.Now.Sub(t))
}
