// Command libfuzzercorpus turns native Go fuzz corpus files
// (testdata/fuzz/FuzzX/*, "go test fuzz v1") into inputs of the target's
// libFuzzer build by go-118-fuzz-build, the tool OSS-Fuzz and
// ClusterFuzzLite build native Go targets with.
//
// Such a build does not read the native format: it hands the raw input to
// go-fuzz-headers, which cuts each argument of the target's function as a
// 4-byte big-endian length then that many bytes (GetBytes). The last
// argument's length is what is left, so a one-argument input is its
// length then its bytes, and a two-argument one (FuzzResults) the same for
// each in turn. An empty argument cannot be written so (a length of 0
// reads as 30): such a file is left out and counted. Only []byte and
// string arguments are read.
//
//	go run ./scripts/libfuzzercorpus -o OUT DIR...
//
// OUT ending in .zip is written as a zip (ClusterFuzzLite's
// $OUT/<target>_seed_corpus.zip), unless there is no input, else as a
// directory of files named as their sources. A DIR that does not exist
// adds nothing.
package main

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("libfuzzercorpus", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "the zip (.zip) or directory to write")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *out == "" {
		fmt.Fprintln(stderr, "usage: libfuzzercorpus -o OUT.zip|OUTDIR DIR...")
		return 2
	}
	inputs, skipped, err := convertDirs(fs.Args())
	if err == nil && len(inputs) == 0 && strings.HasSuffix(*out, ".zip") {
		// An empty seed zip is no corpus: the engine starts from nothing
		// either way, and unzip warns of it.
		fmt.Fprintf(stdout, "%s: no input (%d left out: an empty argument), not written\n", *out, skipped)
		return 0
	}
	if err == nil {
		err = write(*out, inputs)
	}
	if err != nil {
		fmt.Fprintln(stderr, "libfuzzercorpus:", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s: %d inputs (%d left out: an empty argument)\n", *out, len(inputs), skipped)
	return 0
}

type input struct {
	name string
	data []byte
}

// convertDirs converts every file of dirs, in name order.
func convertDirs(dirs []string) (inputs []input, skipped int, err error) {
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, 0, err
		}
		for _, e := range entries {
			if e.IsDir() {
				continue
			}
			path := filepath.Join(dir, e.Name())
			raw, err := os.ReadFile(path)
			if err != nil {
				return nil, 0, err
			}
			args, err := parseCorpusFile(raw)
			if err != nil {
				return nil, 0, fmt.Errorf("%s: %v", path, err)
			}
			data, ok := encode(args)
			if !ok {
				skipped++
				continue
			}
			inputs = append(inputs, input{e.Name(), data})
		}
	}
	return inputs, skipped, nil
}

// parseCorpusFile reads a native corpus file: the header line, then one Go
// expression a line, []byte("...") or string("...") (or a bare string).
func parseCorpusFile(raw []byte) ([][]byte, error) {
	lines := strings.Split(strings.TrimRight(string(raw), "\n"), "\n")
	if len(lines) == 0 || lines[0] != "go test fuzz v1" {
		return nil, errors.New(`not a native corpus file: no "go test fuzz v1" line`)
	}
	var args [][]byte
	for i, line := range lines[1:] {
		if strings.TrimSpace(line) == "" {
			continue
		}
		v, err := parseValue(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", i+2, err)
		}
		args = append(args, v)
	}
	return args, nil
}

func parseValue(line string) ([]byte, error) {
	expr, err := parser.ParseExpr(line)
	if err != nil {
		return nil, err
	}
	if call, ok := expr.(*ast.CallExpr); ok && len(call.Args) == 1 && isBytesOrString(call.Fun) {
		expr = call.Args[0]
	}
	lit, ok := expr.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return nil, fmt.Errorf("%.40s: only []byte and string arguments are read", line)
	}
	s, err := strconv.Unquote(lit.Value)
	if err != nil {
		return nil, err
	}
	return []byte(s), nil
}

func isBytesOrString(fun ast.Expr) bool {
	switch f := fun.(type) {
	case *ast.Ident:
		return f.Name == "string"
	case *ast.ArrayType:
		elt, ok := f.Elt.(*ast.Ident)
		return f.Len == nil && ok && (elt.Name == "byte" || elt.Name == "uint8")
	}
	return false
}

// encode writes args as go-fuzz-headers reads them; false when an argument
// is empty.
func encode(args [][]byte) ([]byte, bool) {
	var b bytes.Buffer
	for _, a := range args {
		if len(a) == 0 {
			return nil, false
		}
		b.Write(binary.BigEndian.AppendUint32(nil, uint32(len(a))))
		b.Write(a)
	}
	return b.Bytes(), true
}

func write(out string, inputs []input) error {
	if !strings.HasSuffix(out, ".zip") {
		if err := os.MkdirAll(out, 0o755); err != nil {
			return err
		}
		for _, in := range inputs {
			if err := os.WriteFile(filepath.Join(out, in.name), in.data, 0o644); err != nil {
				return err
			}
		}
		return nil
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	z := zip.NewWriter(f)
	for _, in := range inputs {
		w, err := z.Create(in.name)
		if err == nil {
			_, err = w.Write(in.data)
		}
		if err != nil {
			f.Close()
			return err
		}
	}
	if err := z.Close(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
