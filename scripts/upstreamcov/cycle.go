package main

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/tools/go/packages"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
	_ "k8s.io/kubernetes/pkg/features" // registers kube's gates on utilfeature's gate, with their defaults
)

// The third table (issue 32): the share of upstream's storage and DRA
// filter plugins the tests drive, counting only the code kube-scheduler
// runs for a pod in its scheduling cycle up to and including PostFilter,
// with the release's default feature gates: the code preemption depends
// on (the filter phase, and the dry run's PreFilterExtensions and state
// clones). Which code that is, a walk finds:
//
//   - it starts at the methods named in cycleEntries, on every type of
//     the packages: Name (the framework's statuses name the plugin),
//     PreEnqueue, PreFilter, Filter, PreFilterExtensions, AddPod,
//     RemovePod, PostFilter (DynamicResources') and Clone (the cycle
//     state's, which preemption's dry run clones), and at the methods in
//     callbacks;
//   - from each function it reaches, it follows every function and method
//     of the packages the body names (called or passed as a value), and an
//     interface method to the methods of that name on the packages' types
//     that implement the interface;
//   - it never enters what cycleExcluded says is outside the cycle:
//     Score, NormalizeScore, ScoreExtensions, PreScore, Reserve,
//     Unreserve, PreBind, PreBindPreFlight, Bind, Permit,
//     EventsToRegister, SignPod, the queueing hints (isSchedulableAfter*,
//     preQueueingHint), exported New* (the plugins' and managers'
//     constructors, which scheduler.New runs once), pod-group code
//     (functions and receivers whose name holds "podgroup", any case:
//     PodGroupPostFilter and what only it calls), and test helpers
//     (receivers named Fake*, the file test_utils.go);
//   - inside a function it leaves out, neither counting nor following,
//     what runs only with pod-group code or a feature gate away from its
//     default (cycleSpans): the body of an if statement one of whose
//     conjuncts needs that (names something holding "podgroup" or
//     SchedulingGroup, call arguments aside; or reads a gate, as
//     X.Enable<G>, X.enable<G>, features.<G> or Enabled(features.<G>), at
//     the value it is not by default, a pod-group gate (podGroupGates)
//     on), and the else branch, or the rest of the block after an
//     `if ... { return }`, of a condition whose falsity does.
//
// The table ends with what was left out, by reason, with the statements
// the profile drove of each; -v lists the functions counted (driven of
// statements, undriven lines) and those left out, with why.
//
// The walk sees no calls the packages' code receives from elsewhere
// than the framework's entry points, so callbacks lists those it must
// add. (The structured allocator, k8s.io/dynamic-resource-allocation,
// calls the DRA manager's DeviceClassLister.Get, which validateDeviceClass
// reaches too; the assume caches' event handlers and the informers'
// indexers run on informer events, outside any cycle.)
var cycleEntries = map[string]bool{
	"Name": true, "PreEnqueue": true, "PreFilter": true, "Filter": true, "PreFilterExtensions": true,
	"AddPod": true, "RemovePod": true, "PostFilter": true, "Clone": true,
}

// storagePkgs are the packages of the third table.
var storagePkgs = []string{
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/dynamicresources",
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/volumebinding",
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/volumerestrictions",
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodevolumelimits",
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/volumezone",
}

// callbacks are methods of the packages that code outside them calls
// during the cycle, on values the walk's code hands over: "receiver.name".
// The audit is -v's list of the functions left out, with what the profile
// drove of each: informer event handlers and indexers are driven there,
// outside any cycle.
var callbacks = map[string]bool{
	// findMatchingVolumes: sort.Sort(byPVCSize(claimsToBind)).
	"byPVCSize.Len": true, "byPVCSize.Less": true, "byPVCSize.Swap": true,
}

var outsideCycle = map[string]bool{
	"Score": true, "NormalizeScore": true, "ScoreExtensions": true, "PreScore": true,
	"Reserve": true, "Unreserve": true, "PreBind": true, "PreBindPreFlight": true, "Bind": true,
	"Permit": true, "EventsToRegister": true, "SignPod": true, "preQueueingHint": true,
}

// podGroupGates are the fields of feature.Features for pod-group
// scheduling: code needing them is pod-group code, whatever the default.
var podGroupGates = map[string]bool{
	"EnableGenericWorkload": true, "EnableDRAWorkloadResourceClaims": true,
	"EnableTopologyAwareWorkloadScheduling": true, "EnableCompositePodGroup": true,
}

// cycleExcluded says why the function is outside the cycle, or "".
func cycleExcluded(fn *ast.FuncDecl, file string) string {
	name, recv := fn.Name.Name, receiver(fn)
	switch {
	case filepath.Base(file) == "test_utils.go" || strings.HasPrefix(recv, "Fake") || strings.HasPrefix(recv, "fake"):
		return "test helper"
	case strings.Contains(strings.ToLower(name+" "+recv), "podgroup"):
		return "pod-group code"
	case outsideCycle[name] || strings.HasPrefix(name, "isSchedulableAfter"):
		return "outside the cycle"
	case recv == "" && strings.HasPrefix(name, "New") || recv != "" && name == "New":
		return "constructor"
	}
	return ""
}

// leftOut is a span of a function the walk leaves out, and why.
type leftOut struct {
	span
	why string // "pod-group code" or "gate G=v (default w)"
}

// cycleFunc is one function of the packages.
type cycleFunc struct {
	decl    *ast.FuncDecl
	pkg     *packages.Package
	file    string // import path of the package / base name
	name    string // Recv.Name or Name
	why     string // cycleExcluded's answer
	spans   []leftOut
	reached bool
}

// cycleWalk loads the packages (from dir, the main module) and returns
// their functions, those the walk reaches marked, in file and line order.
func cycleWalk(dir string) ([]*cycleFunc, *token.FileSet, error) {
	fset := token.NewFileSet()
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo,
		Dir:  dir, Fset: fset,
	}
	pkgs, err := packages.Load(cfg, storagePkgs...)
	if err != nil {
		return nil, nil, err
	}
	if packages.PrintErrors(pkgs) > 0 {
		return nil, nil, fmt.Errorf("loading %s failed", strings.Join(storagePkgs, ", "))
	}
	var funcs []*cycleFunc
	byObj := map[*types.Func]*cycleFunc{}
	for _, p := range pkgs {
		for _, f := range p.Syntax {
			file := fset.Position(f.Pos()).Filename
			for _, d := range f.Decls {
				fn, ok := d.(*ast.FuncDecl)
				if !ok || fn.Body == nil {
					continue
				}
				cf := &cycleFunc{decl: fn, pkg: p, file: p.PkgPath + "/" + filepath.Base(file), name: fn.Name.Name, why: cycleExcluded(fn, file)}
				if r := receiver(fn); r != "" {
					cf.name = r + "." + fn.Name.Name
				}
				cf.spans = cycleSpans(fset, fn)
				funcs = append(funcs, cf)
				if obj, ok := p.TypesInfo.Defs[fn.Name].(*types.Func); ok {
					byObj[obj] = cf
				}
			}
		}
	}
	sort.SliceStable(funcs, func(i, j int) bool {
		a, b := fset.Position(funcs[i].decl.Pos()), fset.Position(funcs[j].decl.Pos())
		if a.Filename != b.Filename {
			return a.Filename < b.Filename
		}
		return a.Line < b.Line
	})

	var queue []*cycleFunc
	reach := func(cf *cycleFunc) {
		if cf.reached || cf.why != "" {
			return
		}
		cf.reached = true
		queue = append(queue, cf)
	}
	for _, cf := range funcs {
		if cf.decl.Recv != nil && cycleEntries[cf.decl.Name.Name] || callbacks[cf.name] {
			reach(cf)
		}
	}
	for len(queue) > 0 {
		cf := queue[0]
		queue = queue[1:]
		ast.Inspect(cf.decl.Body, func(n ast.Node) bool {
			if n == nil {
				return false
			}
			for _, s := range cf.spans {
				if s.holdsNode(fset, n) {
					return false
				}
			}
			id, ok := n.(*ast.Ident)
			if !ok {
				return true
			}
			f, ok := cf.pkg.TypesInfo.Uses[id].(*types.Func)
			if !ok {
				return true
			}
			f = f.Origin()
			if to, ok := byObj[f]; ok {
				reach(to)
				return true
			}
			// An interface method: the packages' methods of that name on
			// types that implement the interface.
			sig, _ := f.Type().(*types.Signature)
			if sig == nil || sig.Recv() == nil {
				return true
			}
			iface, ok := sig.Recv().Type().Underlying().(*types.Interface)
			if !ok {
				return true
			}
			for obj, to := range byObj {
				if obj.Name() == f.Name() && implements(obj, iface) {
					reach(to)
				}
			}
			return true
		})
	}
	return funcs, fset, nil
}

// implements reports whether the receiver type of method m (or a pointer
// to it) has every method of iface, by name (the receiver may be generic).
func implements(m *types.Func, iface *types.Interface) bool {
	sig := m.Type().(*types.Signature)
	if sig.Recv() == nil {
		return false
	}
	t := sig.Recv().Type()
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	ms := types.NewMethodSet(types.NewPointer(t))
	for i := range iface.NumMethods() {
		im := iface.Method(i)
		if ms.Lookup(m.Pkg(), im.Name()) == nil {
			return false
		}
	}
	return true
}

func (s span) holdsNode(fset *token.FileSet, n ast.Node) bool {
	p := fset.Position(n.Pos())
	return s.holds(block{startLine: p.Line, startCol: p.Column, endLine: p.Line, endCol: p.Column})
}

// cycleSpans returns the spans of fn the walk leaves out: code that
// needs pod-group code or a feature gate away from its default.
func cycleSpans(fset *token.FileSet, fn *ast.FuncDecl) []leftOut {
	var out []leftOut
	add := func(from, to token.Pos, why string) {
		out = append(out, leftOut{span{fset.Position(from), fset.Position(to)}, why})
	}
	// Locals holding a gate: x := utilfeature.DefaultFeatureGate.Enabled(features.G).
	gates := map[string]string{}
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		if a, ok := n.(*ast.AssignStmt); ok && len(a.Lhs) == 1 && len(a.Rhs) == 1 {
			if id, ok := a.Lhs[0].(*ast.Ident); ok {
				if g, ok := gateOf(a.Rhs[0], nil); ok {
					gates[id.Name] = g
				}
			}
		}
		return true
	})
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.IfStmt:
			if why := thenNeeds(n.Cond, gates); why != "" {
				add(n.Body.Pos(), n.Body.End(), why)
			}
			if why := elseNeeds(n.Cond, gates); why != "" && n.Else != nil {
				add(n.Else.Pos(), n.Else.End(), why)
			}
		case *ast.BlockStmt:
			// After `if <cond> { ... return }`, the rest of the block
			// runs when cond is false.
			for i, st := range n.List {
				ifs, ok := st.(*ast.IfStmt)
				if !ok || ifs.Else != nil || !endsInReturn(ifs.Body) || i+1 == len(n.List) {
					continue
				}
				if why := elseNeeds(ifs.Cond, gates); why != "" {
					add(n.List[i+1].Pos(), n.End(), why)
					break
				}
			}
		}
		return true
	})
	return out
}

// conjuncts splits e at its top-level &&.
func conjuncts(e ast.Expr) []ast.Expr {
	e = ast.Unparen(e)
	if b, ok := e.(*ast.BinaryExpr); ok && b.Op == token.LAND {
		return append(conjuncts(b.X), conjuncts(b.Y)...)
	}
	return []ast.Expr{e}
}

// thenNeeds says why the body of `if cond` is left out, or "": a
// conjunct of cond needs pod-group code or a gate away from its default.
// gates are the function's locals that hold a gate, by name.
func thenNeeds(cond ast.Expr, gates map[string]string) string {
	for _, c := range conjuncts(cond) {
		if why := conjunctNeeds(c, true, gates); why != "" {
			return why
		}
	}
	return ""
}

// elseNeeds says why the code that runs when cond is false is left out,
// or "": cond is one conjunct whose falsity needs pod-group code or a
// gate away from its default.
func elseNeeds(cond ast.Expr, gates map[string]string) string {
	if cs := conjuncts(cond); len(cs) == 1 {
		return conjunctNeeds(cs[0], false, gates)
	}
	return ""
}

// conjunctNeeds says what c having the value holds needs that the walk
// leaves out: "pod-group code", "gate G away from its default" or "".
func conjunctNeeds(c ast.Expr, holds bool, gates map[string]string) string {
	c = ast.Unparen(c)
	if u, ok := c.(*ast.UnaryExpr); ok && u.Op == token.NOT {
		return conjunctNeeds(u.X, !holds, gates)
	}
	if b, ok := c.(*ast.BinaryExpr); ok && b.Op == token.EQL && isNil(b.Y) {
		return conjunctNeeds(b.X, !holds, gates) // x == nil: x's absence
	}
	if b, ok := c.(*ast.BinaryExpr); ok && b.Op == token.NEQ && isNil(b.Y) {
		c = b.X
	}
	if gate, ok := gateOf(c, gates); ok {
		spec, known := utilfeature.DefaultMutableFeatureGate.GetAll()[featuregate.Feature(gate)]
		switch {
		case podGroupGates["Enable"+gate] && holds:
			return "pod-group code"
		case known && spec.Default != holds:
			return fmt.Sprintf("gate %s=%v (default %v)", gate, holds, spec.Default)
		}
		return ""
	}
	if holds && mentionsPodGroup(c) {
		return "pod-group code"
	}
	return ""
}

func isNil(e ast.Expr) bool {
	id, ok := ast.Unparen(e).(*ast.Ident)
	return ok && id.Name == "nil"
}

// gateOf returns the feature gate e reads: X.Enable<G> (feature.Features),
// X.enable<G> (a plugin's copy), features.G, Enabled(features.G), or a
// local of gates.
func gateOf(e ast.Expr, gates map[string]string) (string, bool) {
	switch e := ast.Unparen(e).(type) {
	case *ast.Ident:
		g, ok := gates[e.Name]
		return g, ok
	case *ast.SelectorExpr:
		for _, prefix := range []string{"Enable", "enable"} {
			if g, ok := strings.CutPrefix(e.Sel.Name, prefix); ok && g != "" && ast.IsExported(g) {
				return g, true
			}
		}
		if pkg, ok := e.X.(*ast.Ident); ok && pkg.Name == "features" {
			return e.Sel.Name, true
		}
	case *ast.CallExpr:
		if sel, ok := e.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Enabled" && len(e.Args) == 1 {
			return gateOf(e.Args[0], nil)
		}
	}
	return "", false
}

// mentionsPodGroup reports whether e, call arguments aside, names
// something holding "podgroup" (any case) or SchedulingGroup.
func mentionsPodGroup(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			found = found || mentionsPodGroup(n.Fun)
			return false
		case *ast.Ident:
			found = found || n.Name == "SchedulingGroup" || strings.Contains(strings.ToLower(n.Name), "podgroup")
		}
		return !found
	})
	return found
}

// cycleTable prints the third table: per file, per package and in all,
// the statements of the walk's code the profile drove; then what it left
// out. With verbose, each file's counted functions with their shares and
// undriven lines, and the functions left out.
func cycleTable(counts map[string]map[block]int, dir string, verbose bool) error {
	funcs, fset, err := cycleWalk(dir)
	if err != nil {
		return err
	}
	type tally struct{ driven, stmts int }
	byFile := map[string]*tally{}
	var files []string
	byFunc := map[*cycleFunc]*tally{}
	missed := map[*cycleFunc][]int{}
	leftWhy := map[string]*tally{}
	funcsOf := map[string][]*cycleFunc{}
	for _, cf := range funcs {
		if _, ok := byFile[cf.file]; !ok {
			byFile[cf.file] = &tally{}
			files = append(files, cf.file)
		}
		funcsOf[cf.file] = append(funcsOf[cf.file], cf)
		byFunc[cf] = &tally{}
	}
	inFunc := func(file string, b block) (*cycleFunc, string) {
		for _, cf := range funcsOf[file] {
			fs := span{fset.Position(cf.decl.Pos()), fset.Position(cf.decl.End())}
			if !fs.holds(b) {
				continue
			}
			if !cf.reached {
				why := cf.why
				if why == "" {
					why = "not reached"
				}
				return cf, why
			}
			for _, s := range cf.spans {
				if s.holds(b) {
					return cf, s.why
				}
			}
			return cf, ""
		}
		return nil, "outside functions"
	}
	for _, pkg := range storagePkgs {
		seen := false
		for file, blocks := range counts {
			if path.Dir(file) != pkg {
				continue
			}
			seen = true
			if _, ok := byFile[file]; !ok {
				continue // a generated or test file
			}
			for b, n := range blocks {
				cf, why := inFunc(file, b)
				if why != "" {
					if leftWhy[why] == nil {
						leftWhy[why] = &tally{}
					}
					leftWhy[why].stmts += b.stmts
					if n > 0 {
						leftWhy[why].driven += b.stmts
					}
					if cf != nil && !cf.reached {
						byFunc[cf].stmts += b.stmts
						if n > 0 {
							byFunc[cf].driven += b.stmts
						}
					}
					continue
				}
				byFile[file].stmts += b.stmts
				byFunc[cf].stmts += b.stmts
				if n > 0 {
					byFile[file].driven += b.stmts
					byFunc[cf].driven += b.stmts
				} else {
					missed[cf] = append(missed[cf], b.startLine)
				}
			}
		}
		if !seen {
			return fmt.Errorf("%s: not in the profile (was it built with -coverpkg?)", pkg)
		}
	}
	const prefix = "k8s.io/kubernetes/pkg/scheduler/framework/plugins/"
	total := tally{}
	for _, pkg := range storagePkgs {
		sub := tally{}
		for _, file := range files {
			t := byFile[file]
			if path.Dir(file) != pkg || t.stmts == 0 {
				continue
			}
			sub.driven += t.driven
			sub.stmts += t.stmts
			fmt.Printf("%-75s %8d %8d %6.1f%%\n", strings.TrimPrefix(file, prefix), t.driven, t.stmts, pct(t.driven, t.stmts))
			if !verbose {
				continue
			}
			for _, cf := range funcsOf[file] {
				if ft := byFunc[cf]; cf.reached && ft.stmts > 0 {
					lines := missed[cf]
					sort.Ints(lines)
					fmt.Printf("  %-50s %4d/%-4d undriven at %v\n", cf.name, ft.driven, ft.stmts, lines)
				}
			}
		}
		fmt.Printf("%-75s %8d %8d %6.1f%%\n", "  "+strings.TrimPrefix(pkg, prefix)+" (all its files)", sub.driven, sub.stmts, pct(sub.driven, sub.stmts))
		total.driven += sub.driven
		total.stmts += sub.stmts
	}
	fmt.Printf("%-75s %8d %8d %6.1f%%\n", "all five", total.driven, total.stmts, pct(total.driven, total.stmts))
	var whys []string
	for why := range leftWhy {
		whys = append(whys, why)
	}
	sort.Strings(whys)
	var parts []string
	for _, why := range whys {
		parts = append(parts, fmt.Sprintf("  %-70s %8d %8d\n", why, leftWhy[why].driven, leftWhy[why].stmts))
	}
	fmt.Printf("left out:\n%s", strings.Join(parts, ""))
	if verbose {
		fmt.Println("functions left out:")
		for _, cf := range funcs {
			if !cf.reached {
				why := cf.why
				if why == "" {
					why = "not reached"
				}
				fmt.Printf("  %-75s %4d/%-4d %s\n", strings.TrimPrefix(cf.file, prefix)+": "+cf.name, byFunc[cf].driven, byFunc[cf].stmts, why)
			}
		}
	}
	return nil
}
