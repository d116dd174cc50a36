package releases

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
)

// A restated function is one of upstream's that the adapter cannot call
// (it is unexported) and so does again in its own code: a tree's change to
// it is not run by the tree's child.
type restated struct {
	// file is the function's file in a kubernetes tree, name its name as
	// Go writes a method's (Evaluator.findCandidates), recv its receiver's
	// type name ("" for a function).
	file, recv, name string
	// by says where the adapter does it again and what runs the tree's.
	by string
}

// restatedFuncs are the functions of upstream the adapter restates.
var restatedFuncs = []restated{
	{"pkg/scheduler/framework/preemption/preemption.go", "Evaluator", "findCandidates",
		"the adapter's FindCandidates (upstream/upstream.go) does its three steps again (the potential nodes, the PodDisruptionBudgets, the offset and count) before the tree's DryRunPreemption, so FindCandidates, Decide and compare upgrade do not run the tree's change"},
}

// funcText is the text of the function name (of receiver type recv) in
// the Go file path, printed without comments; "" when the file has none.
func funcText(path, recv, name string) (string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		return "", err
	}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Name.Name != name || receiverType(fd) != recv {
			continue
		}
		var b bytes.Buffer
		if err := printer.Fprint(&b, fset, fd); err != nil {
			return "", err
		}
		return b.String(), nil
	}
	return "", nil
}

// receiverType is the name of fd's receiver's type, "" for a function.
func receiverType(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return ""
	}
	t := fd.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// releaseSource is the directory of k8s.io/kubernetes at version in the
// module cache, downloaded when missing.
func releaseSource(version string) (string, error) {
	out, err := exec.Command("go", "mod", "download", "-json", "k8s.io/kubernetes@"+version).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			err = fmt.Errorf("%v: %s", err, bytes.TrimSpace(ee.Stderr))
		}
		return "", fmt.Errorf("go mod download k8s.io/kubernetes@%s: %w", version, err)
	}
	var m struct{ Dir, Error string }
	if err := json.Unmarshal(out, &m); err != nil || m.Dir == "" {
		return "", fmt.Errorf("go mod download k8s.io/kubernetes@%s: no directory (%s%v)", version, m.Error, err)
	}
	return m.Dir, nil
}

// RestatedChanges names the functions the adapter restates that the tree
// changes from its base release base, each with what runs the tree's and
// what does not: a change there is not seen where the adapter restates
// it. An error says the comparison could not be made (the base's source
// not to be had).
func (t Tree) RestatedChanges(base string) ([]string, error) {
	src, err := releaseSource(base)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range restatedFuncs {
		want, err := funcText(filepath.Join(src, filepath.FromSlash(r.file)), r.recv, r.name)
		if err != nil {
			return nil, err
		}
		got, err := funcText(filepath.Join(t.Dir, filepath.FromSlash(r.file)), r.recv, r.name)
		if err != nil && !os.IsNotExist(err) {
			return nil, err
		}
		if got != want {
			name := r.name
			if r.recv != "" {
				name = r.recv + "." + name
			}
			how := "changes"
			if got == "" {
				how = "has no"
			}
			out = append(out, fmt.Sprintf("the tree %s %s (%s) where %s has it: %s", how, name, r.file, base, r.by))
		}
	}
	return out, nil
}
