// Command upstreamcov reads a Go coverage profile and prints the share of
// statements driven in upstream's preemption.go, util.go (v1.37),
// executor.go and default_preemption.go, per file and in all, leaving out
// pod-group code:
//
//   - functions whose name holds "PodGroup", and the methods of
//     podGroupExecutorPreemptor and compositePodGroupExecutorPreemptor;
//   - functions only pod-group code calls (podGroupOnly);
//   - the bodies of if statements whose condition reads
//     Spec.SchedulingGroup or the pod-group feature flags
//     (EnableGenericWorkload, EnableCompositePodGroup,
//     EnableTopologyAwareWorkloadScheduling), except the guard
//     `if p.Spec.SchedulingGroup == nil ... { return ... }`, whose body is
//     the single-pod path: there, what follows the guard in its block is
//     pod-group code;
//   - the cases of a switch that name PodGroupKeyType or
//     CompositePodGroupKeyType (victimRank).
//
// A second table, the pod-group code, counts every statement of
// podgrouppreemption.go, types.go and util.go (issue 19's share).
//
// A third table, the storage and DRA plugins (issue 32), counts the code
// of dynamicresources, volumebinding, volumerestrictions,
// nodevolumelimits and volumezone that a pod's scheduling cycle runs up
// to PostFilter: cycle.go says how a walk from the plugins' entry points
// finds it.
//
// A block counts as driven when any test binary of the profile ran it.
// With -v it also lists the statements left undriven, by line (and, in
// the third table, by function).
//
//	go run ./scripts/upstreamcov [-v] PROFILE
package main

import (
	"bufio"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

var files = []string{
	"pkg/scheduler/framework/preemption/preemption.go",
	"pkg/scheduler/framework/preemption/util.go",
	"pkg/scheduler/framework/preemption/executor.go",
	"pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go",
}

// podGroupFiles are the files of upstream's workload-aware preemption,
// counted whole.
var podGroupFiles = []string{
	"pkg/scheduler/framework/preemption/podgrouppreemption.go",
	"pkg/scheduler/framework/preemption/types.go",
	"pkg/scheduler/framework/preemption/util.go",
}

// podGroupOnly are the functions of the files that only pod-group code
// calls (v1.37: the hierarchy walk of CompositePodGroups).
var podGroupOnly = map[string]bool{"TraverseHierarchyUp": true}

type block struct {
	startLine, startCol, endLine, endCol int
	stmts                                int
}

type span struct{ from, to token.Position }

func (s span) holds(b block) bool {
	after := b.startLine > s.from.Line || (b.startLine == s.from.Line && b.startCol >= s.from.Column)
	before := b.endLine < s.to.Line || (b.endLine == s.to.Line && b.endCol <= s.to.Column)
	return after && before
}

func main() {
	verbose := flag.Bool("v", false, "list the undriven statements by line")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: upstreamcov [-v] PROFILE")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *verbose); err != nil {
		fmt.Fprintln(os.Stderr, "upstreamcov:", err)
		os.Exit(2)
	}
}

func run(profile string, verbose bool) error {
	counts, err := readProfile(profile)
	if err != nil {
		return err
	}
	// The module's own copy of k8s.io/kubernetes, whatever version go.mod
	// pins.
	moddir, err := moduleDir("k8s.io/kubernetes")
	if err != nil {
		return err
	}
	fmt.Printf("%-75s %8s %8s %7s\n", "single-pod code: file (pod-group code left out)", "driven", "stmts", "share")
	if err := table(counts, moddir, files, podGroupSpans, "all four", verbose); err != nil {
		return err
	}
	fmt.Printf("\n%-75s %8s %8s %7s\n", "pod-group code: file (every statement)", "driven", "stmts", "share")
	if err := table(counts, moddir, podGroupFiles, func(string) ([]span, error) { return nil, nil }, "all three", verbose); err != nil {
		return err
	}
	fmt.Printf("\n%-75s %8s %8s %7s\n", "storage and DRA plugins: file (the cycle's code, up to PostFilter)", "driven", "stmts", "share")
	return cycleTable(counts, ".", verbose)
}

// table prints the driven share of each of files, the statements in the
// spans exclude returns left out, and their sum.
func table(counts map[string]map[block]int, moddir string, files []string, exclude func(string) ([]span, error), all string, verbose bool) error {
	total, driven := 0, 0
	for _, f := range files {
		excluded, err := exclude(filepath.Join(moddir, f))
		if err != nil {
			return err
		}
		blocks := counts["k8s.io/kubernetes/"+f]
		if len(blocks) == 0 {
			return fmt.Errorf("%s: not in the profile (was it built with -coverpkg?)", f)
		}
		ft, fd := 0, 0
		var missed []int
	next:
		for b, n := range blocks {
			for _, s := range excluded {
				if s.holds(b) {
					continue next
				}
			}
			ft += b.stmts
			if n > 0 {
				fd += b.stmts
			} else {
				missed = append(missed, b.startLine)
			}
		}
		total += ft
		driven += fd
		fmt.Printf("%-75s %8d %8d %6.1f%%\n", f, fd, ft, pct(fd, ft))
		if verbose {
			sort.Ints(missed)
			fmt.Printf("  undriven blocks at lines %v\n", missed)
		}
	}
	fmt.Printf("%-75s %8d %8d %6.1f%%\n", all, driven, total, pct(driven, total))
	return nil
}

func pct(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

// moduleDir is where the build finds module path: `go list -m -f {{.Dir}}`.
func moduleDir(path string) (string, error) {
	out, err := execGo("list", "-m", "-f", "{{.Dir}}", path)
	if err != nil {
		return "", err
	}
	dir := strings.TrimSpace(out)
	if dir == "" {
		return "", fmt.Errorf("go list -m %s: no directory (run go mod download)", path)
	}
	return dir, nil
}

// readProfile returns, per file, each block with its highest count over
// the profile (go test writes one line per block per test binary).
func readProfile(path string) (map[string]map[block]int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]map[block]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if line == 1 && strings.HasPrefix(text, "mode:") {
			continue
		}
		file, b, n, err := parseLine(text)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, line, err)
		}
		if out[file] == nil {
			out[file] = map[block]int{}
		}
		if n > out[file][b] {
			out[file][b] = n
		} else if _, ok := out[file][b]; !ok {
			out[file][b] = n
		}
	}
	return out, sc.Err()
}

// parseLine reads "file:l0.c0,l1.c1 stmts count".
func parseLine(s string) (string, block, int, error) {
	colon := strings.LastIndex(s, ":")
	if colon < 0 {
		return "", block{}, 0, fmt.Errorf("no file in %q", s)
	}
	fields := strings.Fields(s[colon+1:])
	if len(fields) != 3 {
		return "", block{}, 0, fmt.Errorf("want range, statements and count in %q", s)
	}
	var b block
	if _, err := fmt.Sscanf(fields[0], "%d.%d,%d.%d", &b.startLine, &b.startCol, &b.endLine, &b.endCol); err != nil {
		return "", block{}, 0, fmt.Errorf("range %q: %v", fields[0], err)
	}
	var err error
	if b.stmts, err = strconv.Atoi(fields[1]); err != nil {
		return "", block{}, 0, err
	}
	n, err := strconv.Atoi(fields[2])
	if err != nil {
		return "", block{}, 0, err
	}
	return s[:colon], b, n, nil
}

// podGroupSpans returns the source spans of pod-group code in file.
func podGroupSpans(file string) ([]span, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, 0)
	if err != nil {
		return nil, err
	}
	var out []span
	add := func(n ast.Node) { out = append(out, span{fset.Position(n.Pos()), fset.Position(n.End())}) }
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncDecl:
			if strings.Contains(n.Name.Name, "PodGroup") || receiver(n) == "podGroupExecutorPreemptor" || receiver(n) == "compositePodGroupExecutorPreemptor" || podGroupOnly[n.Name.Name] {
				add(n)
				return false
			}
		case *ast.IfStmt:
			cond := exprString(fset, file, n.Cond)
			if strings.Contains(cond, "SchedulingGroup == nil") {
				return true // a guard: see the BlockStmt case
			}
			for _, mark := range []string{"SchedulingGroup", "EnableGenericWorkload", "EnableCompositePodGroup", "EnableTopologyAwareWorkloadScheduling"} {
				if strings.Contains(cond, mark) {
					add(n.Body)
					break
				}
			}
		case *ast.BlockStmt:
			// After `if p.Spec.SchedulingGroup == nil ... { return }`, the
			// rest of the block runs for pods in a group only.
			for i, st := range n.List {
				ifs, ok := st.(*ast.IfStmt)
				if !ok || ifs.Else != nil || !strings.Contains(exprString(fset, file, ifs.Cond), "SchedulingGroup == nil") || !endsInReturn(ifs.Body) {
					continue
				}
				if i+1 < len(n.List) {
					out = append(out, span{fset.Position(n.List[i+1].Pos()), fset.Position(n.End())})
				}
				break
			}
		case *ast.CaseClause:
			for _, e := range n.List {
				if c := exprString(fset, file, e); strings.Contains(c, "PodGroupKeyType") {
					out = append(out, span{fset.Position(n.Colon), fset.Position(n.End())})
					break
				}
			}
		}
		return true
	})
	return out, nil
}

func endsInReturn(b *ast.BlockStmt) bool {
	if len(b.List) == 0 {
		return false
	}
	_, ok := b.List[len(b.List)-1].(*ast.ReturnStmt)
	return ok
}

func receiver(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return ""
	}
	t := fn.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	switch x := t.(type) { // a generic type's parameters
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

func exprString(fset *token.FileSet, file string, e ast.Expr) string {
	src, err := os.ReadFile(file)
	if err != nil {
		return ""
	}
	from, to := fset.Position(e.Pos()).Offset, fset.Position(e.End()).Offset
	if from < 0 || to > len(src) || from > to {
		return ""
	}
	return string(src[from:to])
}

func execGo(args ...string) (string, error) {
	out, err := exec.Command("go", args...).Output()
	return string(out), err
}
