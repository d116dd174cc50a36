// Package docs holds the project's pages; its test checks that README.md
// stays a door and that every link of the pages leads somewhere.
package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// maxReadmeLines bounds README.md: a door, not a notebook (issue 29).
const maxReadmeLines = 300

// pages are README.md and every page of docs/, relative to this folder.
func pages(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob("*.md")
	if err != nil || len(docs) == 0 {
		t.Fatalf("no pages in docs/: %v", err)
	}
	return append([]string{"../README.md"}, docs...)
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestReadmeIsADoor(t *testing.T) {
	readme := read(t, "../README.md")
	if n := strings.Count(readme, "\n"); n > maxReadmeLines {
		t.Errorf("README.md has %d lines, more than %d: move the detail to a page of docs/", n, maxReadmeLines)
	}
}

var (
	linkRe    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	headingRe = regexp.MustCompile("(?m)^#{1,6} +(.+?) *$")
	fenceRe   = regexp.MustCompile("(?ms)^ *```.*?^ *```")
	dateRe    = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
)

// slug is the anchor GitHub gives a heading: lower case, punctuation but
// '-' and '_' dropped, spaces made '-'.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors lists the headings' anchors of a page, code blocks left out.
func anchors(page string) map[string]bool {
	out := map[string]bool{}
	for _, m := range headingRe.FindAllStringSubmatch(fenceRe.ReplaceAllString(page, ""), -1) {
		out[slug(m[1])] = true
	}
	return out
}

// checkLink says what is wrong with a relative link of page from, or "".
func checkLink(t *testing.T, from, link string) string {
	if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
		return ""
	}
	file, anchor, _ := strings.Cut(link, "#")
	target := from
	if file != "" {
		target = filepath.Join(filepath.Dir(from), file)
	}
	info, err := os.Stat(target)
	if err != nil {
		return "no such file " + target
	}
	if anchor == "" {
		return ""
	}
	if info.IsDir() || !strings.HasSuffix(target, ".md") {
		return "an anchor into " + target + ", which is not a page"
	}
	if !anchors(read(t, target))[anchor] {
		return "no heading of " + target + " has the anchor #" + anchor
	}
	return ""
}

func TestLinksLeadSomewhere(t *testing.T) {
	for _, from := range pages(t) {
		text := fenceRe.ReplaceAllString(read(t, from), "")
		for _, m := range linkRe.FindAllStringSubmatch(text, -1) {
			if why := checkLink(t, from, m[1]); why != "" {
				t.Errorf("%s: link %s: %s", from, m[1], why)
			}
		}
	}
}

// TestFiguresPointAtSections checks every row of the README's figures
// table: a date, a command, and a link to the docs section that holds the
// figure's whole table.
func TestFiguresPointAtSections(t *testing.T) {
	readme := read(t, "../README.md")
	_, after, ok := strings.Cut(readme, "\n## Headline figures\n")
	if !ok {
		t.Fatal("README.md has no section \"Headline figures\"")
	}
	if i := strings.Index(after, "\n## "); i >= 0 {
		after = after[:i]
	}
	rows := 0
	for _, line := range strings.Split(after, "\n") {
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| date ") {
			continue
		}
		rows++
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		if len(cells) != 5 {
			t.Errorf("row %q: %d cells, want 5 (date, figure, result, command, details)", line, len(cells))
			continue
		}
		if d := strings.TrimSpace(cells[0]); !dateRe.MatchString(d) {
			t.Errorf("row %q: %q is not a date (YYYY-MM-DD)", line, d)
		}
		if !strings.Contains(cells[3], "`") {
			t.Errorf("row %q: no command", line)
		}
		links := linkRe.FindAllStringSubmatch(cells[4], -1)
		if len(links) == 0 || !strings.HasPrefix(links[0][1], "docs/") || !strings.Contains(links[0][1], "#") {
			t.Errorf("row %q: no link to a section of docs/", line)
			continue
		}
		if why := checkLink(t, "../README.md", links[0][1]); why != "" {
			t.Errorf("row %q: %s", line, why)
		}
	}
	if rows == 0 {
		t.Error("the figures table has no rows")
	}
}
