package benchcmp

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Rendering a Report, which Stat built: text (benchstat's layout),
// Markdown, CSV and JSON. Nothing here computes a statistic.

// WriteText writes the tables for a terminal.
func (r *Report) WriteText(w io.Writer) error {
	return r.write(w, false)
}

// WriteMarkdown writes the tables as GitHub-flavoured markdown.
func (r *Report) WriteMarkdown(w io.Writer) error {
	return r.write(w, true)
}

func (r *Report) write(w io.Writer, md bool) error {
	var b strings.Builder
	writeConfig := func(config []ConfigValue, blank bool) {
		if len(config) == 0 {
			return
		}
		if md {
			var parts []string
			for _, c := range config {
				parts = append(parts, fmt.Sprintf("%s: `%s`", c.Key, c.Value))
			}
			fmt.Fprintf(&b, "%s\n\n", strings.Join(parts, ", "))
			return
		}
		for _, c := range config {
			fmt.Fprintf(&b, "%s: %s\n", c.Key, c.Value)
		}
		if blank {
			b.WriteString("\n")
		}
	}
	writeConfig(r.Config, true)
	for i, t := range r.Tables {
		if i > 0 {
			b.WriteString("\n")
		}
		// A configuration's tables follow one another: its keys head the
		// first.
		if i == 0 || !slices.Equal(t.Config, r.Tables[i-1].Config) {
			writeConfig(t.Config, false)
		}
		grid, notes := t.grid()
		if md {
			writeMarkdownGrid(&b, grid, "lr")
			if len(notes) > 0 {
				b.WriteString("\n")
			}
			for j, n := range notes {
				fmt.Fprintf(&b, "%s %s  \n", superscript(j+1), n)
			}
		} else {
			writeTextGrid(&b, grid, "lr")
			for j, n := range notes {
				fmt.Fprintf(&b, "%s %s\n", superscript(j+1), n)
			}
		}
	}
	// Unparsable lines and mixed configurations are warnings, for the
	// command to print on stderr (Warnings, Mixed), not part of the
	// tables.
	_, err := io.WriteString(w, b.String())
	return err
}

// grid lays out t as strings, header first, and returns the footnotes the
// cells refer to.
func (t *Table) grid() ([][]string, []string) {
	var notes []string
	mark := func(ws []string) string {
		var s string
		for _, w := range ws {
			i := slices.Index(notes, w)
			if i < 0 {
				notes = append(notes, w)
				i = len(notes) - 1
			}
			s += superscript(i + 1)
		}
		if s != "" {
			s = " " + s
		}
		return s
	}
	header := []string{t.Unit}
	header = append(header, t.Columns...)
	for _, p := range t.Pairs {
		header = append(header, p.New+" vs "+p.Base)
	}
	grid := [][]string{header}
	for _, r := range t.Rows {
		line := []string{r.Name}
		for _, c := range r.Cells {
			if c == nil {
				line = append(line, "-")
				continue
			}
			line = append(line, FormatSummary(*c, t.Unit)+mark(c.Warnings))
		}
		for _, c := range r.Comparisons {
			if c == nil {
				line = append(line, "-")
				continue
			}
			line = append(line, formatComparison(*c)+mark(c.Warnings))
		}
		grid = append(grid, line)
	}
	return grid, notes
}

// formatComparison is "2.12x (p=0.002 n=6)" for a significant change and
// "~ (p=0.394 n=6)" for none.
func formatComparison(c Comparison) string {
	if !c.Significant {
		return "~ (" + c.FormatP() + ")"
	}
	return FormatRatio(c.Ratio) + " (" + c.FormatP() + ")"
}

func superscript(n int) string {
	const digits = "⁰¹²³⁴⁵⁶⁷⁸⁹"
	var b strings.Builder
	for _, d := range strconv.Itoa(n) {
		b.WriteString(string([]rune(digits)[d-'0']))
	}
	return b.String()
}

// writeTextGrid writes columns two spaces apart; align holds 'l' or 'r'
// per column, the last one repeating.
func writeTextGrid(b *strings.Builder, grid [][]string, align string) {
	widths := make([]int, len(grid[0]))
	for _, line := range grid {
		for i, s := range line {
			widths[i] = max(widths[i], utf8.RuneCountInString(s))
		}
	}
	for _, line := range grid {
		var l strings.Builder
		for i, s := range line {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(s))
			if i > 0 {
				l.WriteString("  ")
			}
			if align[min(i, len(align)-1)] == 'r' {
				l.WriteString(pad + s)
			} else {
				l.WriteString(s + pad)
			}
		}
		b.WriteString(strings.TrimRight(l.String(), " ") + "\n")
	}
}

// writeMarkdownGrid writes a GitHub table; align holds 'l' or 'r' per
// column, the last one repeating.
func writeMarkdownGrid(b *strings.Builder, grid [][]string, align string) {
	esc := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
	for i, line := range grid {
		b.WriteString("|")
		for _, s := range line {
			b.WriteString(" " + esc(s) + " |")
		}
		b.WriteString("\n")
		if i == 0 {
			b.WriteString("|")
			for j := range line {
				if align[min(j, len(align)-1)] == 'r' {
					b.WriteString("---:|")
				} else {
					b.WriteString("---|")
				}
			}
			b.WriteString("\n")
		}
	}
}

// WriteCSV writes one CSV block per table, with raw values (base units):
// benchmark, then center, lo, hi and n of each column, then ratio and p of
// each comparison. Blocks are separated by an empty record.
func (r *Report) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for i, t := range r.Tables {
		if i > 0 {
			cw.Write([]string{})
		}
		for _, c := range t.Config {
			cw.Write([]string{c.Key, c.Value})
		}
		header := []string{t.Unit}
		for _, c := range t.Columns {
			header = append(header, c+" center", c+" lo", c+" hi", c+" n")
		}
		for _, p := range t.Pairs {
			header = append(header, p.New+" vs "+p.Base+" ratio", p.New+" vs "+p.Base+" p")
		}
		cw.Write(header)
		for _, row := range t.Rows {
			rec := []string{row.Name}
			for _, c := range row.Cells {
				if c == nil {
					rec = append(rec, "", "", "", "")
					continue
				}
				rec = append(rec, num(c.Center), num(c.Lo), num(c.Hi), strconv.Itoa(c.N))
			}
			for _, c := range row.Comparisons {
				if c == nil {
					rec = append(rec, "", "")
					continue
				}
				rec = append(rec, num(c.Ratio), num(c.P))
			}
			cw.Write(rec)
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteJSON writes the report as indented JSON, row by row: the bytes are
// those of json.Encoder with a two-space indent, without the whole
// document in memory at once (a million results make some 80 MB of it).
func (r *Report) WriteJSON(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	shell := *r
	shell.Tables = nil
	doc, err := json.MarshalIndent(&shell, "", "  ")
	if err != nil {
		return err
	}
	// Tables is the second field: its null stands where the tables go.
	const tablesNull = "\n  \"tables\": null"
	i := bytes.Index(doc, []byte(tablesNull))
	if i < 0 || len(r.Tables) == 0 {
		bw.Write(doc)
		bw.WriteString("\n")
		return bw.Flush()
	}
	bw.Write(doc[:i])
	bw.WriteString("\n  \"tables\": [")
	for ti, t := range r.Tables {
		if ti > 0 {
			bw.WriteString(",")
		}
		bw.WriteString("\n    ")
		if err := writeTableJSON(bw, t); err != nil {
			return err
		}
	}
	bw.WriteString("\n  ]")
	bw.Write(doc[i+len(tablesNull):])
	bw.WriteString("\n")
	return bw.Flush()
}

// writeTableJSON writes t as json.MarshalIndent at depth 2 writes it, a
// row at a time.
func writeTableJSON(bw *bufio.Writer, t *Table) error {
	shell := *t
	shell.Rows = nil
	doc, err := json.MarshalIndent(&shell, "    ", "  ")
	if err != nil {
		return err
	}
	// Rows is the last field.
	const rowsNull = "\n      \"rows\": null\n    }"
	if len(t.Rows) == 0 || !bytes.HasSuffix(doc, []byte(rowsNull)) {
		if t.Rows != nil {
			doc, err = json.MarshalIndent(t, "    ", "  ")
			if err != nil {
				return err
			}
		}
		bw.Write(doc)
		return nil
	}
	bw.Write(doc[:len(doc)-len(rowsNull)])
	bw.WriteString("\n      \"rows\": [")
	for i, row := range t.Rows {
		if i > 0 {
			bw.WriteString(",")
		}
		bw.WriteString("\n        ")
		doc, err := json.MarshalIndent(row, "        ", "  ")
		if err != nil {
			return err
		}
		bw.Write(doc)
	}
	bw.WriteString("\n      ]\n    }")
	return nil
}
