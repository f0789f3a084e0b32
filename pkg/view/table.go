package view

import (
	"io"
	"strings"
)

// table lays out rows in columns three spaces apart, as kubectl does, measuring text
// without its colour codes so coloured cells still line up.
type table struct {
	rows [][]text
	// widths are at least the widths of the columns, and after write the widths used:
	// rows written later under the same header stay aligned with it.
	widths []int
}

func (t *table) row(cells ...text) { t.rows = append(t.rows, cells) }

// plainRow adds a row of uncoloured cells.
func (t *table) plainRow(cells ...string) {
	row := make([]text, len(cells))
	for i, c := range cells {
		row[i] = plain(c)
	}
	t.row(row...)
}

func (t *table) write(w io.Writer, color bool) error {
	widths := t.widths
	for _, r := range t.rows {
		for i, c := range r {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], c.width())
		}
	}
	t.widths = widths
	var b strings.Builder
	for _, r := range t.rows {
		var line strings.Builder
		for i, c := range r {
			line.WriteString(c.render(color))
			if i < len(r)-1 {
				line.WriteString(strings.Repeat(" ", widths[i]-c.width()+3))
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " "))
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}
