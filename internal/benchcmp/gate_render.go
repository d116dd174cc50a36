package benchcmp

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Rendering a GateResult, which Gate built: the text and Markdown
// verdicts. Nothing here decides a check.

func (g *GateResult) rule() string {
	var parts []string
	for _, u := range gatedUnits {
		sign := "+"
		if higherIsBetter(u) {
			// Said only when checked: the benchmarks of go test have no
			// throughput; compare e2e's have.
			if !slices.ContainsFunc(g.Checks, func(c Check) bool { return c.Unit == u }) {
				continue
			}
			sign = "-"
		}
		parts = append(parts, fmt.Sprintf("%s%s%% %s", sign, strconv.FormatFloat(g.Options.threshold(u), 'f', -1, 64), u))
	}
	return fmt.Sprintf("a regression is a change significant at p < %s (Holm-Bonferroni over the gate's checks) and worse than %s",
		strconv.FormatFloat(g.Options.Alpha, 'f', -1, 64), strings.Join(parts, ", "))
}

func (g *GateResult) summary() string {
	n := len(g.Regressions())
	switch {
	case len(g.Problems) > 0:
		return "BAD INPUT: " + strings.Join(g.Problems, "; ")
	case n == 1:
		return fmt.Sprintf("FAIL: 1 regression in %d comparisons", len(g.Checks))
	case n > 0:
		return fmt.Sprintf("FAIL: %d regressions in %d comparisons", n, len(g.Checks))
	}
	return fmt.Sprintf("PASS: no regression in %d comparisons", len(g.Checks))
}

// gateValue prints allocations unscaled, to a tenth (the median of an
// even sample may end in .5), so that a change of one allocation shows;
// times and bytes are scaled as stat scales them ("31.02m", "647.6Ki"),
// the change column showing a change too small for the scaled value.
func gateValue(v float64, unit string) string {
	if unit == "allocs/op" && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64)
	}
	return FormatValue(v, unit)
}

func gateSummary(s Summary, unit string) string {
	return gateValue(s.Center, unit) + " ± " + s.RangePct
}

func (c Check) cells() []string {
	change := FormatPct(c.Comparison.ChangePct())
	return []string{c.Benchmark, c.Unit, gateSummary(c.Base, c.Unit), gateSummary(c.Head, c.Unit), change, c.Comparison.FormatP(), string(c.Verdict)}
}

var checkHeader = []string{"benchmark", "unit", "base", "head", "change", "p", "verdict"}

// WriteText writes the report for a terminal; it ends with a one-line
// summary (PASS, FAIL or BAD INPUT with the problems). Warnings are not
// part of it: the command prints them, and the problems, on stderr.
func (g *GateResult) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "gate: base %s, head %s\n%s\n", g.Base, g.Head, g.rule())
	if len(g.Checks) > 0 {
		b.WriteString("\n")
		grid := [][]string{checkHeader}
		for _, c := range g.Checks {
			grid = append(grid, c.cells())
		}
		writeTextGrid(&b, grid, "llrrrrl")
	}
	lists := []struct {
		title string
		items []string
	}{
		{"only in base (not compared)", g.OnlyBase},
		{"only in head (not compared)", g.OnlyHead},
		{"not compared", g.Unpaired},
		// Problems are errors, for the command to print on stderr; the
		// summary line below is the verdict.
	}
	for _, l := range lists {
		if len(l.items) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n%s:\n", l.title)
		for _, it := range l.items {
			fmt.Fprintf(&b, "  %s\n", it)
		}
	}
	if regs := g.Regressions(); len(regs) > 0 {
		b.WriteString("\nregressions:\n")
		for _, c := range regs {
			fmt.Fprintf(&b, "  %s %s: %s -> %s (%s, %s)\n", c.Benchmark, c.Unit, gateValue(c.Base.Center, c.Unit), gateValue(c.Head.Center, c.Unit), FormatPct(c.Comparison.ChangePct()), c.Comparison.FormatP())
		}
	}
	fmt.Fprintf(&b, "\n%s\n", g.summary())
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteMarkdown writes the report as a pull-request comment: the verdict,
// the regressions, then every comparison in a collapsed section.
func (g *GateResult) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "### Benchmark gate: %s\n\n", g.summary())
	fmt.Fprintf(&b, "Base `%s`, head `%s`; %s.\n", g.Base, g.Head, g.rule())
	row := func(c Check) []string {
		cells := c.cells()
		cells[0] = "`" + cells[0] + "`"
		if c.Verdict == Regression {
			cells[6] = "**" + cells[6] + "**"
		}
		return cells
	}
	if regs := g.Regressions(); len(regs) > 0 {
		b.WriteString("\n#### Regressions\n\n")
		grid := [][]string{checkHeader}
		for _, c := range regs {
			grid = append(grid, row(c))
		}
		writeMarkdownGrid(&b, grid, "llrrrrl")
	}
	if len(g.Checks) > 0 {
		fmt.Fprintf(&b, "\n<details><summary>All %d comparisons</summary>\n\n", len(g.Checks))
		grid := [][]string{checkHeader}
		for _, c := range g.Checks {
			grid = append(grid, row(c))
		}
		writeMarkdownGrid(&b, grid, "llrrrrl")
		b.WriteString("\n</details>\n")
	}
	lists := []struct {
		title string
		items []string
	}{
		{"Only in base (not compared)", g.OnlyBase},
		{"Only in head (not compared)", g.OnlyHead},
		{"Not compared", g.Unpaired},
		// A pull-request comment has no stderr: problems and warnings
		// are part of it.
		{"Bad input", g.Problems},
		{"Warnings", g.Warnings},
	}
	for _, l := range lists {
		if len(l.items) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n**%s:**\n\n", l.title)
		for _, it := range l.items {
			fmt.Fprintf(&b, "- `%s`\n", it)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
