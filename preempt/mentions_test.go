package preempt_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/preemptbench/preemptbench/preempt"
)

// releaseMention is a release written out, v1.X.Y.
var releaseMention = regexp.MustCompile(`\bv1\.([0-9]+)\.([0-9]+)\b`)

// generatedHeader is the line Go's convention puts at the top of a
// generated file.
var generatedHeader = regexp.MustCompile(`(?m)^// Code generated .* DO NOT EDIT\.$`)

// The current release is written in one Go file, the table's
// (preempt/release.go): no other Go file of the repository (tests, the
// release modules and generated files included) has a string literal
// holding it, and no mention of a release in a Go file or a doc (comments
// and literals, README.md and docs/*.md) disagrees with the table. A
// generated file says the release it was generated from: it must be the
// current one (regenerate after a bump). The command's help is checked by
// cli.TestHelpNamesTheTablesReleases.
func TestCurrentReleaseWrittenOnce(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	const home = "preempt/release.go"
	files := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") && path != root {
				return filepath.SkipDir
			}
			return nil
		}
		isDoc := rel == "README.md" || (strings.HasPrefix(rel, "docs/") && strings.HasSuffix(rel, ".md"))
		if !strings.HasSuffix(rel, ".go") && !isDoc {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		for _, m := range preempt.StaleReleaseMentions(string(b)) {
			t.Errorf("%s mentions %s", rel, m)
		}
		if isDoc || rel == home {
			return nil
		}
		if generatedHeader.Match(b) {
			if h := generatedHeader.Find(b); !strings.Contains(string(h), preempt.CurrentRelease) && releaseMention.Match(h) {
				t.Errorf("%s was generated from another release (%q): regenerate it", rel, h)
			}
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, b, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		fset := token.NewFileSet()
		fset.AddFile(path, -1, len(b))
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				s = lit.Value
			}
			if strings.Contains(s, preempt.CurrentRelease) {
				t.Errorf("%s writes the current release in a string (%.60q): derive it from preempt.CurrentRelease (or upstream.Version)", rel, s)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Errorf("read %d files under %s: not the repository", files, root)
	}
	if !slices.Contains(preempt.Releases, preempt.CurrentRelease) || preempt.Releases[len(preempt.Releases)-1] != preempt.CurrentRelease {
		t.Errorf("Releases %v do not end with CurrentRelease %s", preempt.Releases, preempt.CurrentRelease)
	}
}

// The check finds what it is for.
func TestDisagreeingMentions(t *testing.T) {
	cur := preempt.CurrentRelease
	m := releaseMention.FindStringSubmatch(cur)
	stale := "v1." + m[1] + "." + m[2] + "9"
	if got := preempt.StaleReleaseMentions("as " + cur + " and v1.999.0 do"); len(got) != 0 {
		t.Errorf("the table's release and an unknown minor: %v, want none", got)
	}
	if got := preempt.StaleReleaseMentions("as " + stale + " does"); len(got) != 1 {
		t.Errorf("%s beside %s: %v, want it", stale, cur, got)
	}
}
