package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// getBytes cuts one argument as go-fuzz-headers' GetBytes does (the
// version go-118-fuzz-build requires): a 4-byte big-endian length, 0
// read as 30, taken modulo what is left unless equal to it.
func getBytes(data []byte, pos uint32) ([]byte, uint32, error) {
	if int(pos)+4 > len(data) {
		return nil, pos, errors.New("no length")
	}
	length := binary.BigEndian.Uint32(data[pos:])
	pos += 4
	if length == 0 {
		length = 30
	}
	left := uint32(len(data)) - pos
	if left == 0 {
		return nil, pos, errors.New("nothing left")
	}
	if length != left {
		length %= left
	}
	return data[pos : pos+length], pos + length, nil
}

// Every corpus of one or two arguments reads back, through the engine's
// cutting, as the arguments written.
func TestEncodeReadsBack(t *testing.T) {
	for _, args := range [][][]byte{
		{[]byte("a")},
		{[]byte("apiVersion: v1\nkind: Node\n")},
		{bytes.Repeat([]byte{0}, 300)},
		{[]byte("base"), []byte("head")},
		{[]byte("x"), bytes.Repeat([]byte("y"), 70000)},
		{bytes.Repeat([]byte("x"), 70000), []byte("y")},
	} {
		data, ok := encode(args)
		if !ok {
			t.Fatalf("%q: not encoded", args)
		}
		var got [][]byte
		pos := uint32(0)
		for range args {
			a, next, err := getBytes(data, pos)
			if err != nil {
				t.Fatalf("%q: %v", args, err)
			}
			got, pos = append(got, a), next
		}
		if diff := cmp.Diff(args, got); diff != "" {
			t.Errorf("read back (-written +read):\n%s", diff)
		}
	}
	if _, ok := encode([][]byte{[]byte("a"), nil}); ok {
		t.Error("an empty argument was encoded")
	}
}

func TestParseCorpusFile(t *testing.T) {
	for _, tc := range []struct {
		file string
		want [][]byte
		err  bool
	}{
		{"go test fuzz v1\n[]byte(\"a\\x00\\n\")\n", [][]byte{[]byte("a\x00\n")}, false},
		{"go test fuzz v1\n[]byte(\"base\")\n[]byte(\"head\")\n", [][]byte{[]byte("base"), []byte("head")}, false},
		{"go test fuzz v1\nstring(\"s\")\n\"t\"\n[]uint8(\"u\")\n", [][]byte{[]byte("s"), []byte("t"), []byte("u")}, false},
		{"go test fuzz v1\nint(3)\n", nil, true},
		{"[]byte(\"a\")\n", nil, true},
	} {
		got, err := parseCorpusFile([]byte(tc.file))
		if (err != nil) != tc.err {
			t.Errorf("%q: error %v, want error %v", tc.file, err, tc.err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tc.file, diff)
		}
	}
}

// The command converts a directory, leaves out what it cannot write, and
// writes a zip or a directory.
func TestRun(t *testing.T) {
	in := t.TempDir()
	files := map[string]string{
		"one":   "go test fuzz v1\n[]byte(\"abc\")\n",
		"empty": "go test fuzz v1\n[]byte(\"\")\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(in, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "corpus")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-o", out, in, filepath.Join(in, "absent")}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if want := fmt.Sprintf("%s: 1 inputs (1 left out: an empty argument)\n", out); stdout.String() != want {
		t.Errorf("stdout %q, want %q", stdout.String(), want)
	}
	got, err := os.ReadFile(filepath.Join(out, "one"))
	if err != nil || !bytes.Equal(got, []byte("\x00\x00\x00\x03abc")) {
		t.Errorf("one: %q, %v", got, err)
	}
	zipOut := filepath.Join(t.TempDir(), "x_seed_corpus.zip")
	if code := run([]string{"-o", zipOut, in}, &stdout, &stderr); code != 0 {
		t.Fatalf("zip: exit %d: %s", code, stderr.String())
	}
	if _, err := os.Stat(zipOut); err != nil {
		t.Errorf("zip: %v", err)
	}
	// No input: no zip.
	emptyOut := filepath.Join(t.TempDir(), "y_seed_corpus.zip")
	if code := run([]string{"-o", emptyOut, filepath.Join(in, "absent")}, &stdout, &stderr); code != 0 {
		t.Fatalf("empty zip: exit %d: %s", code, stderr.String())
	}
	if _, err := os.Stat(emptyOut); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("an empty corpus was written as %s: %v", emptyOut, err)
	}
}
