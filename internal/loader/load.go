package loader

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"golang.org/x/term"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	policyv1beta1 "k8s.io/api/policy/v1beta1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	_ "k8s.io/kubernetes/pkg/apis/core/install" // defaulting of core/v1, as the API server applies it
	k8sv1 "k8s.io/kubernetes/pkg/apis/core/v1"
	"k8s.io/kubernetes/pkg/apis/policy"
	_ "k8s.io/kubernetes/pkg/apis/policy/install"   // policy/v1beta1 <-> v1 conversion
	_ "k8s.io/kubernetes/pkg/apis/resource/install" // resource.k8s.io/v1 defaulting (a request's allocation mode and count)
	schedulingapi "k8s.io/kubernetes/pkg/apis/scheduling"
	_ "k8s.io/kubernetes/pkg/apis/scheduling/install" // scheduling.k8s.io defaulting, v1alpha3 <-> v1beta1 conversion
	_ "k8s.io/kubernetes/pkg/apis/storage/install"
	k8sjson "sigs.k8s.io/json"

	"github.com/preemptbench/preemptbench/preempt"
)

// LoadPaths reads one cluster from files and directories, as kubectl and
// kube-scheduler would see it:
//
//   - a file holds a kubectl List or a typed list (NodeList, PodList, ...;
//     items without kind take it from the list, as kubectl and client-go
//     do), single objects, several YAML documents or JSON values, or a
//     JSON array or YAML sequence of them;
//   - a directory is read whole (every *.json, *.yaml and *.yml below it,
//     in name order), as `kubectl cluster-info dump --output-directory`
//     writes it; named pipes, sockets and devices in it are skipped, with
//     a note;
//   - policy/v1beta1 PodDisruptionBudgets are converted to policy/v1 as the
//     API server serves them, and every object gets the API server's
//     defaulting (a container's limits become its requests when it has
//     none, a node's capacity its allocatable, ...);
//   - pods in phase Succeeded or Failed, pods bound to a node the dump does
//     not hold and pods nominated to one are left out, as kube-scheduler's
//     informer and snapshot leave them out; each is reported in a note;
//   - scheduling.k8s.io PodGroups (v1beta1; v1alpha3 converted to
//     v1beta1 as the API server serves them) and CompositePodGroups
//     (v1alpha3) are read, defaulted as the API server defaults them
//     under v1.37.2's default gates; a pod's membership is its
//     spec.schedulingGroup.podGroupName (preempt.PodGroupName);
//   - objects of kinds the filters do not read (Services, Events, ...) are
//     skipped, with a note; kinds are case-sensitive: an object of a kind
//     read in another case ("node") is ignored with a note naming it and
//     the right kind, an error under Options.Strict.
//
// Decoding is the API server's under strict field validation: field
// names are matched case-sensitively (a field in the wrong case is never
// taken for the right one); unknown fields (the wrong case among them,
// with the right name) and duplicate fields, of objects and of lists, in
// JSON and in YAML (and YAML keys such as 1 and "1" that are one JSON
// key), are reported in a note naming the file, the object and the field
// path, the last value of a duplicate taken as the API server takes it;
// under Options.Strict they are errors.
//
// YAML is read as kubectl reads it (go-yaml v2, YAML 1.1: yes and y are
// true), its documents split by apimachinery's YAMLReader, kubectl's,
// whatever their separator style (---, --- # comment, --- with content,
// ... end markers with or without a comment, %YAML directives, CR LF, CR
// or NEL line breaks, a byte order mark, UTF-16: the markers are first
// written in the reader's form).
// JSON values separated by --- lines are YAML documents. A YAML document
// whose aliases would make its JSON form over 16 times its size (plus 64
// KiB) is refused, as an alias bomb.
//
// One object whose text is over MaxObjectBytes is refused from the
// file's bytes, before decoding, naming it; so is one whose annotations
// are over the API server's limit (256 KiB).
//
// The objects read, summed over every file in input order, take at most
// Options.MaxDecodedBytes (MaxDecodedBytes by default) once decoded, as
// decodedSize estimates it: the object that takes them over it is
// refused, naming it.
//
// A file larger than Options.MaxBytes (MaxInputBytes by default) is
// refused naming the file, having read no more than the limit and a byte
// (a device or a FIFO too: -cluster /dev/zero ends at once, as binary
// data). A named pipe or a terminal named as an input is read to its
// first end, after Options.Notify is told it is waited on. The path "-"
// is standard input (Options.Stdin), read once. A cluster without nodes
// is an error naming the inputs, and so is one whose every object was
// ignored.
//
// Errors and notes name the file (and the document or list item) and the
// object ("pod default/a"), never a Go type.
func LoadPaths(paths []string) (*preempt.Cluster, []string, error) {
	return LoadPathsWith(paths, Options{})
}

// MaxInputBytes is the default limit on one input file: some four times a
// kubectl dump of 5000 nodes and 20000 pods in YAML.
const MaxInputBytes = 256 << 20

// Options change how LoadPathsWith reads.
type Options struct {
	// Strict makes unknown and duplicate fields errors, not notes.
	Strict bool
	// MaxBytes bounds each input file; 0 is MaxInputBytes.
	MaxBytes int64
	// Stdin is what the path "-" reads; nil is os.Stdin.
	Stdin io.Reader
	// Notify, when set, is told at once what cannot wait for the notes
	// at the end: that a named pipe (FIFO) or a terminal is waited on.
	Notify func(note string)
	// KeepNominated keeps the pending pods nominated to nodes the input
	// does not hold (a gang's members, whose nodes are another file's).
	KeepNominated bool
	// MaxDecodedBytes bounds what the objects read take once decoded
	// (decodedSize, summed over every file); 0 is MaxDecodedBytes.
	MaxDecodedBytes int64
}

func (o Options) notify(format string, a ...any) {
	if o.Notify != nil {
		o.Notify(fmt.Sprintf(format, a...))
	}
}

func (o Options) maxDecoded() int64 {
	if o.MaxDecodedBytes > 0 {
		return o.MaxDecodedBytes
	}
	return MaxDecodedBytes
}

func (o Options) maxBytes() int64 {
	if o.MaxBytes > 0 {
		return o.MaxBytes
	}
	return MaxInputBytes
}

// LoadPathsWith is LoadPaths with options.
func LoadPathsWith(paths []string, opts Options) (*preempt.Cluster, []string, error) {
	if len(paths) == 0 {
		return nil, nil, errors.New("no input: name a file, a directory or - (standard input)")
	}
	if n := countStdin(paths); n > 1 {
		return nil, nil, fmt.Errorf("standard input (-) named %d times: it can be read once", n)
	}
	r := reader{opts: opts}
	for _, p := range paths {
		if err := r.readPath(p); err != nil {
			return nil, nil, err
		}
	}
	c, notes, err := r.cluster()
	if err != nil {
		return nil, nil, err
	}
	if len(c.Nodes) == 0 {
		names := make([]string, len(paths))
		for i, p := range paths {
			names[i] = p
			if p == "-" {
				names[i] = "standard input"
			}
		}
		if len(r.objects) == 0 && len(r.ignored) > 0 {
			return nil, nil, fmt.Errorf("nothing read from %s: every object was ignored: %s", strings.Join(names, ", "), abbreviate(r.ignored))
		}
		if len(r.ignored) > 0 {
			return nil, nil, fmt.Errorf("no nodes in %s: a cluster to preempt on needs at least one Node; ignored: %s", strings.Join(names, ", "), abbreviate(r.ignored))
		}
		return nil, nil, fmt.Errorf("no nodes in %s: a cluster to preempt on needs at least one Node (an empty List, or one without items, holds none)", strings.Join(names, ", "))
	}
	return c, notes, nil
}

func countStdin(paths []string) int {
	n := 0
	for _, p := range paths {
		if p == "-" {
			n++
		}
	}
	return n
}

// LoadCluster is LoadPaths on one file's contents.
func LoadCluster(name string, data []byte) (*preempt.Cluster, []string, error) {
	return LoadClusterWith(name, data, Options{})
}

// LoadClusterWith is LoadCluster with options (MaxBytes bounds data too).
// Unlike LoadPaths it accepts a file without nodes (one file of several).
func LoadClusterWith(name string, data []byte, opts Options) (*preempt.Cluster, []string, error) {
	return loadClusterWith(name, data, opts, false)
}

// loadClusterWith is LoadClusterWith, never on the fast path with slow.
func loadClusterWith(name string, data []byte, opts Options, slow bool) (*preempt.Cluster, []string, error) {
	r := reader{opts: opts, slow: slow}
	if int64(len(data)) > opts.maxBytes() {
		return nil, nil, tooLarge(name, opts.maxBytes())
	}
	if err := r.readFile(name, data); err != nil {
		return nil, nil, err
	}
	return r.cluster()
}

func tooLarge(name string, max int64) error {
	return &tooLargeError{name, max}
}

// TooLarge reports err a refusal of an input over its size limit.
func TooLarge(err error) bool {
	var e *tooLargeError
	return errors.As(err, &e)
}

type tooLargeError struct {
	name string
	max  int64
}

func (e *tooLargeError) Error() string {
	if e.max == MaxPodBytes {
		return fmt.Sprintf("%s: larger than %d bytes, more than any Pod the API server stores (etcd takes 1.5 MiB by default, a pod's annotations at most 256 KiB)", e.name, e.max)
	}
	return fmt.Sprintf("%s: larger than %d bytes, the limit on an input file (raise it with -max-input-bytes)", e.name, e.max)
}

// MaxPodBytes bounds the preemptor's file whatever MaxBytes says: the API
// server stores no Pod that large, and the loader takes some eight times
// a file's size while it decodes (a pod with a 250 MB annotation took 2
// GB).
const MaxPodBytes = 4 << 20

// podMaxBytes is the limit on the preemptor's file.
func (o Options) podMaxBytes() int64 { return min(o.maxBytes(), MaxPodBytes) }

// readAll reads at most max bytes of rd; more is an error, and so is
// binary data (a NUL byte in the first 4 KiB), which no kubectl output
// holds. sizeHint is rd's size when known (a regular file's), else 0.
func readAll(name string, rd io.Reader, max, sizeHint int64) ([]byte, error) {
	br := bufio.NewReaderSize(io.LimitReader(&onceEOF{r: rd}, max+1), 4096)
	head, err := br.Peek(4096)
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if bytes.IndexByte(head, 0) >= 0 && !hasUTF16BOM(head) {
		return nil, fmt.Errorf("%s: binary data (a NUL byte in its first %d bytes), not a kubectl dump", name, len(head))
	}
	data, err := readSized(br, min(sizeHint, max)+1)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if int64(len(data)) > max {
		return nil, tooLarge(name, max)
	}
	return data, nil
}

// onceEOF ends at r's first end: a terminal's Ctrl-D ends its input once,
// and reading on would wait for more.
type onceEOF struct {
	r   io.Reader
	eof bool
}

func (o *onceEOF) Read(p []byte) (int, error) {
	if o.eof {
		return 0, io.EOF
	}
	n, err := o.r.Read(p)
	if err == io.EOF {
		o.eof = true
	}
	return n, err
}

// readSized is io.ReadAll, starting with a buffer of size bytes (a big
// file read whole is not copied as its buffer doubles, nor held twice).
func readSized(r io.Reader, size int64) ([]byte, error) {
	b := make([]byte, 0, max(size, 512))
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // more room, as io.ReadAll makes it
		}
	}
}

// readFileLimited reads a file (or standard input for "-") through the
// limit.
func (r *reader) readFileLimited(path string) ([]byte, error) {
	if path == "-" {
		in := r.opts.Stdin
		if in == nil {
			in = os.Stdin
		}
		if f, ok := in.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			r.opts.notify("standard input is a terminal: waiting for input (end it with Ctrl-D)")
		}
		return readAll("standard input", in, r.opts.maxBytes(), 0)
	}
	// Opening a named pipe waits for a writer, and reading it or a
	// terminal for input: say so first.
	if info, err := os.Stat(path); err == nil && info.Mode()&fs.ModeNamedPipe != 0 {
		r.opts.notify("%s is a named pipe (FIFO): waiting for input", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var size int64
	if info, err := f.Stat(); err == nil && info.Mode().IsRegular() {
		size = info.Size()
	} else if err == nil && info.Mode()&fs.ModeCharDevice != 0 && term.IsTerminal(int(f.Fd())) {
		r.opts.notify("%s is a terminal: waiting for input (end it with Ctrl-D)", path)
	}
	return readAll(path, f, r.opts.maxBytes(), size)
}

// LoadPod reads exactly one Pod (alone or as the only item of a List),
// defaulted as the API server would.
func LoadPod(name string, data []byte) (*v1.Pod, error) {
	p, _, err := LoadPodWith(name, data, Options{})
	return p, err
}

// ReadInput reads the file at path, or standard input for "-", through
// opts' size limit.
func ReadInput(path string, opts Options) ([]byte, error) {
	r := reader{opts: opts}
	return r.readFileLimited(path)
}

// ReadPodInput is ReadInput for the preemptor's file (LoadPodWith's),
// bounded by MaxPodBytes too.
func ReadPodInput(path string, opts Options) ([]byte, error) {
	opts.MaxBytes = opts.podMaxBytes()
	return ReadInput(path, opts)
}

// LoadPodWith is LoadPod with options; it also returns the notes on
// unknown and duplicate fields.
func LoadPodWith(name string, data []byte, opts Options) (*v1.Pod, []string, error) {
	p, err := loadPod(name, data, opts)
	if err != nil {
		return nil, nil, err
	}
	return p.pod, p.warnings, nil
}

type loadedPod struct {
	pod      *v1.Pod
	warnings []string
}

func loadPod(name string, data []byte, opts Options) (*loadedPod, error) {
	r := reader{opts: opts}
	if int64(len(data)) > opts.podMaxBytes() {
		return nil, tooLarge(name, opts.podMaxBytes())
	}
	if err := r.readFile(name, data); err != nil {
		return nil, err
	}
	if len(r.objects) == 0 && len(r.ignored) == 1 && len(r.skipped) == 0 {
		return nil, errors.New(r.ignored[0])
	}
	if n := len(r.objects); n != 1 || len(r.skipped)+len(r.ignored) > 0 {
		return nil, fmt.Errorf("%s: want exactly one Pod, found %d objects", name, n+len(r.skipped)+len(r.ignored))
	}
	p, ok := r.objects[0].(*v1.Pod)
	if !ok {
		return nil, fmt.Errorf("%s: want a Pod, found a %s", name, kindOf(r.objects[0]))
	}
	if p.Spec.NodeName != "" {
		return nil, fmt.Errorf("%s: pod %s is already bound to node %q", name, preempt.Key(p.Namespace, p.Name), p.Spec.NodeName)
	}
	if err := preempt.ValidatePod(p); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &loadedPod{pod: p, warnings: r.warnings}, nil
}

// friendly rewrites a JSON decoding error in terms of fields and JSON
// types, without Go type names.
func friendly(err error) string {
	got, value, field, goType, ok := jsonTypeError(err)
	if !ok {
		return jsonMessage(err)
	}
	what := fmt.Sprintf("%s where %s is wanted", article(got), jsonKind(goType))
	if got == "number" && value != "" && jsonKind(goType) == "a number" {
		bits := strings.TrimLeftFunc(goType, unicode.IsLetter)
		if bits == "" {
			bits = "64"
		}
		what = fmt.Sprintf("%s is out of range (a %s-bit %s)", value, bits, strings.TrimRightFunc(goType, unicode.IsDigit))
		if strings.HasPrefix(goType, "int") || strings.HasPrefix(goType, "uint") {
			if f, err := strconv.ParseFloat(value, 64); err == nil && strings.ContainsAny(value, ".eE") {
				what = fmt.Sprintf("%s is not an integer (a %s-bit %s is wanted)", value, bits, strings.TrimRightFunc(goType, unicode.IsDigit))
				if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
					what = fmt.Sprintf("%s is not written as an integer (a %s-bit %s is wanted: write %d)", value, bits, strings.TrimRightFunc(goType, unicode.IsDigit), int64(f))
				}
			}
		}
	}
	if field == "" {
		return what
	}
	return fmt.Sprintf("field %s: %s", field, what)
}

func article(jsonType string) string {
	switch jsonType {
	case "object", "array":
		return "an " + jsonType
	}
	return "a " + jsonType
}

// jsonKind names what a Go type decodes from.
func jsonKind(goType string) string {
	switch {
	case strings.HasPrefix(goType, "[]"):
		return "a list"
	case strings.HasPrefix(goType, "map["):
		return "an object"
	case goType == "string" || strings.HasSuffix(goType, "Name") || strings.HasSuffix(goType, "Protocol") || strings.HasSuffix(goType, "Policy") || strings.HasSuffix(goType, "Phase"):
		return "a string"
	case goType == "bool":
		return "a boolean"
	case strings.HasPrefix(goType, "int") || strings.HasPrefix(goType, "uint") || strings.HasPrefix(goType, "float"):
		return "a number"
	case strings.HasSuffix(goType, "Quantity"):
		return "a quantity (a string such as \"500m\" or \"1Gi\", or a number)"
	case strings.HasSuffix(goType, "Time"):
		return "a time (RFC 3339)"
	}
	return "an object"
}

// specialFile names a file mode that is not a regular file's, or "".
func specialFile(mode fs.FileMode) string {
	switch {
	case mode&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case mode&fs.ModeSocket != 0:
		return "a socket"
	case mode&fs.ModeCharDevice != 0:
		return "a character device"
	case mode&fs.ModeDevice != 0:
		return "a device"
	case mode&fs.ModeIrregular != 0:
		return "an irregular file"
	}
	return ""
}

// kinds are the kinds the loader reads, and their lists.
var kinds = []string{"Node", "Pod", "PodDisruptionBudget", "Namespace", "PersistentVolumeClaim", "PersistentVolume", "StorageClass", "CSINode", "CSIDriver", "VolumeAttachment",
	"ResourceClaim", "ResourceClaimTemplate", "ResourceSlice", "DeviceClass", "DeviceTaintRule", "PodGroup", "CompositePodGroup", "List"}

// rightKind is the kind (or list kind) the loader reads that kind is in
// another case ("Node" for "node", "PodList" for "podlist"), quoted, or
// "".
func rightKind(kind string) string {
	for _, k := range kinds {
		for _, form := range []string{k, k + "List"} {
			if strings.EqualFold(kind, form) && kind != form && form != "ListList" {
				return strconv.Quote(form)
			}
		}
	}
	return ""
}

func kindOf(o runtime.Object) string {
	switch o.(type) {
	case *v1.Node:
		return "Node"
	case *v1.Pod:
		return "Pod"
	case *policyv1.PodDisruptionBudget:
		return "PodDisruptionBudget"
	case *schedulingv1beta1.PodGroup:
		return "PodGroup"
	case *schedulingv1alpha3.CompositePodGroup:
		return "CompositePodGroup"
	}
	return strings.TrimPrefix(fmt.Sprintf("%T", o), "*")
}

// reader collects the objects of every file read.
type reader struct {
	opts     Options
	slow     bool     // never the fast path
	warnings []string // unknown and duplicate fields, named
	objects  []runtime.Object
	skipped  []string // "v1 Service default/svc"
	ignored  []string // objects of a kind in the wrong case, why
	notes    []string // about the inputs: files skipped
	inferred []string // files whose kind-less objects got their kind from their fields
	decoded  int64    // what objects take once decoded (decodedSize)
}

func (r *reader) readPath(path string) error {
	if path == "-" {
		data, err := r.readFileLimited(path)
		if err != nil {
			return err
		}
		return r.readFile("standard input", data)
	}
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !info.IsDir() {
		data, err := r.readFileLimited(path)
		if err != nil {
			return err
		}
		return r.readFile(path, data)
	}
	var files, special []string
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch strings.ToLower(filepath.Ext(p)) {
		case ".json", ".yaml", ".yml":
			if d.IsDir() {
				return nil
			}
			mode := d.Type()
			if mode&fs.ModeSymlink != 0 {
				if info, err := os.Stat(p); err == nil {
					mode = info.Mode().Type()
				}
			}
			// A pipe, a socket or a device is no file of a dump: reading
			// it would wait, fail or never end.
			if what := specialFile(mode); what != "" {
				special = append(special, fmt.Sprintf("%s (%s)", p, what))
				return nil
			}
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(special) > 0 {
		r.notes = append(r.notes, fmt.Sprintf("skipped %s of %s that %s (a directory is read for its files): %s", plural(len(special), "file"), path, map[bool]string{true: "is not a regular file", false: "are not regular files"}[len(special) == 1], abbreviate(special)))
	}
	if len(files) == 0 {
		if len(special) > 0 {
			return fmt.Errorf("%s: no regular .json, .yaml or .yml file in the directory (skipped %s)", path, abbreviate(special))
		}
		return fmt.Errorf("%s: no .json, .yaml or .yml file in the directory", path)
	}
	for _, f := range files {
		data, err := r.readFileLimited(f)
		if err != nil {
			return err
		}
		if err := r.readFile(f, data); err != nil {
			return err
		}
	}
	return nil
}

// readFile splits a file into documents and decodes each: on the fast
// path (fast.go) when it takes the file.
func (r *reader) readFile(file string, data []byte) error {
	// Before either path decodes anything (UTF-16 once it is UTF-8).
	utf16 := hasUTF16BOM(data)
	if !utf16 {
		if err := checkNesting(file, data); err != nil {
			return err
		}
		if err := checkObjectSizes(file, data); err != nil {
			return err
		}
	}
	if !r.slow {
		if taken, err := r.readFastOrRefuse(file, data); err != nil || taken {
			return err
		}
	}
	data = normalizeText(data)
	if utf16 {
		if err := checkNesting(file, data); err != nil {
			return err
		}
		if err := checkObjectSizes(file, data); err != nil {
			return err
		}
	}
	docs, err := r.documents(file, data)
	if err != nil {
		return err
	}
	for i, doc := range docs {
		where := fmt.Sprintf("%s: document %d", file, i+1)
		if len(docs) == 1 {
			where = file
		}
		for _, d := range doc.dups {
			if err := r.strictf("%s", describeDup(where, doc.json, d)); err != nil {
				return err
			}
		}
		if err := r.readDocument(file, where, doc.json); err != nil {
			return err
		}
	}
	return nil
}

// documents splits a file: a JSON array, a stream of JSON values, or YAML
// documents (empty and null ones left out). JSON values separated by YAML
// markers ("---") are YAML documents.
func (r *reader) documents(file string, data []byte) ([]yamlDoc, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, fmt.Errorf("%s: empty file", file)
	}
	if trimmed[0] == '[' || trimmed[0] == '{' {
		docs, err := jsonDocuments(file, trimmed)
		if err == nil || !yamlMarker.Match(data) {
			return docs, err
		}
		if docs, yerr := yamlDocuments(file, data); yerr == nil {
			return docs, nil
		}
		return nil, err
	}
	return yamlDocuments(file, data)
}

// yamlMarker matches a line YAML reads as a document marker.
var yamlMarker = regexp.MustCompile(`(?m)^(---|\.\.\.)([ \t\r]|$)`)

func jsonDocuments(file string, trimmed []byte) ([]yamlDoc, error) {
	var docs []yamlDoc
	if trimmed[0] == '[' {
		var raws []json.RawMessage
		if err := json.Unmarshal(trimmed, &raws); err != nil {
			return nil, fmt.Errorf("%s: malformed JSON array: %s", file, friendly(err))
		}
		for _, raw := range raws {
			docs = append(docs, yamlDoc{json: raw})
		}
		return docs, nil
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	for {
		var doc json.RawMessage
		err := dec.Decode(&doc)
		if err == io.EOF {
			return docs, nil
		}
		if err != nil {
			off := dec.InputOffset()
			var syn *json.SyntaxError
			if errors.As(err, &syn) {
				off = syn.Offset
			}
			if len(docs) > 0 {
				line := 1 + bytes.Count(trimmed[:min(int(off), len(trimmed))], []byte("\n"))
				return nil, fmt.Errorf("%s: not a kubectl dump: %d JSON documents, then text that is not JSON at line %d (%s); "+
					"`kubectl cluster-info dump` writes container logs into its output stream: run it with --output-directory DIR and pass DIR", file, len(docs), line, friendly(err))
			}
			return nil, fmt.Errorf("%s: malformed JSON: %s", file, friendly(err))
		}
		docs = append(docs, yamlDoc{json: doc})
	}
}

func yamlDocuments(file string, data []byte) ([]yamlDoc, error) {
	var docs []yamlDoc
	pieces, err := splitYAML(data)
	if err != nil {
		return nil, fmt.Errorf("%s: malformed YAML: %w", file, err)
	}
	content := 0
	for _, p := range pieces {
		if p.hasContent() {
			content++
		}
	}
	for _, piece := range pieces {
		where := fmt.Sprintf("%s: document %d", file, len(docs)+1)
		if content <= 1 {
			where = file
		}
		if bytes.Contains(piece.data, []byte("\u2028")) || bytes.Contains(piece.data, []byte("\u2029")) {
			// go-yaml takes these for line breaks, and would read only
			// the first of the documents they separate.
			if n, err := countYAMLDocuments(piece.data); err == nil && n > 1 {
				return nil, fmt.Errorf("%s: holds %d YAML documents, separated by a line break go-yaml sees in a Unicode line or paragraph separator (U+2028, U+2029): use a plain line break", where, n)
			}
		}
		doc, err := readYAMLDocument(piece.data, piece.line)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		if doc.json == nil {
			continue
		}
		if doc.json[0] == '[' {
			// A sequence's items are documents, as a JSON array's are.
			docs = append(docs, sequenceItems(doc)...)
			continue
		}
		docs = append(docs, doc)
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("%s: empty file", file)
	}
	return docs, nil
}

// sequenceItems are the items of a document holding a sequence, each a
// document with its duplicate fields (those go-yaml names by line, not by
// path, with the first).
func sequenceItems(doc yamlDoc) []yamlDoc {
	var raws []json.RawMessage
	if json.Unmarshal(doc.json, &raws) != nil {
		return []yamlDoc{doc}
	}
	items := make([]yamlDoc, len(raws))
	for i, raw := range raws {
		items[i].json = raw
	}
	for _, d := range doc.dups {
		i := 0
		if rest, ok := strings.CutPrefix(d.path, "["); ok {
			n, tail, _ := strings.Cut(rest, "]")
			i, _ = strconv.Atoi(n)
			d.path = strings.TrimPrefix(tail, ".")
		}
		if i < len(items) {
			items[i].dups = append(items[i].dups, d)
		}
	}
	return items
}

// describeDup names a duplicate field found in a YAML document by the
// object holding it: the document, or the list item.
func describeDup(where string, doc json.RawMessage, d yamlDup) string {
	var tm typeMeta
	_ = k8sjson.UnmarshalCaseSensitivePreserveInts(doc, &tm)
	path := d.path
	if rest, ok := strings.CutPrefix(path, "items["); ok && strings.HasSuffix(tm.Kind, "List") {
		if n, tail, ok := strings.Cut(rest, "]"); ok {
			var list struct {
				Items []json.RawMessage `json:"items"`
			}
			_ = k8sjson.UnmarshalCaseSensitivePreserveInts(doc, &list)
			if i, err := strconv.Atoi(n); err == nil && i < len(list.Items) && tail != "" {
				var item typeMeta
				_ = k8sjson.UnmarshalCaseSensitivePreserveInts(list.Items[i], &item)
				if item.Kind == "" {
					item.Kind = strings.TrimSuffix(tm.Kind, "List")
				}
				where, tm, path = fmt.Sprintf("%s: item %d", where, i), item, strings.TrimPrefix(tail, ".")
			}
		}
	}
	what := describe(tm.Kind, tm.Metadata.Namespace, tm.Metadata.Name)
	if path == "" {
		return fmt.Sprintf("%s: %s: duplicate field: %s", where, what, d.message)
	}
	return fmt.Sprintf("%s: %s: duplicate field %q", where, what, path)
}

// describe names an object: "pod default/a", "node n1", "object" (no kind
// nor name).
func describe(kind, namespace, name string) string {
	what := strings.ToLower(kind)
	if what == "" {
		what = "object"
	}
	switch {
	case name != "" && namespace != "":
		return what + " " + preempt.Key(namespace, name)
	case name != "":
		return what + " " + name
	}
	return what
}

// strictf records a strict-decoding finding: a note, or an error under
// Options.Strict.
func (r *reader) strictf(format string, a ...any) error {
	msg := fmt.Sprintf(format, a...)
	if r.opts.Strict {
		return errors.New(msg)
	}
	r.warnings = append(r.warnings, msg)
	return nil
}

type typeMeta struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
}

// readDocument decodes a list (its items) or a single object.
func (r *reader) readDocument(file, where string, doc json.RawMessage) error {
	var fields map[string]json.RawMessage
	if err := k8sjson.UnmarshalCaseSensitivePreserveInts(doc, &fields); err != nil {
		return fmt.Errorf("%s: malformed: %s", where, friendly(err))
	}
	var tm typeMeta
	if err := k8sjson.UnmarshalCaseSensitivePreserveInts(doc, &tm); err != nil {
		return fmt.Errorf("%s: malformed: %s", where, friendly(err))
	}
	if tm.Kind == "" {
		if _, internal := fields["Items"]; internal {
			return fmt.Errorf("%s: not in a versioned API form: no kind or apiVersion, and \"Items\" capitalised, as in the internal form kubectl 1.8 printed; "+
				"dump the cluster again with a current kubectl (kubectl get nodes,pods,pdb -A -o json)", where)
		}
	}
	if !strings.HasSuffix(tm.Kind, "List") {
		return r.readObject(file, where, doc, "", "")
	}
	// The list itself is decoded as strictly as its items: an "ITEMS" or
	// a second "items" is named, never taken or dropped silently.
	var list listEnvelope
	strictErrs, err := decodeStrict(doc, &list)
	if err != nil {
		return fmt.Errorf("%s: %s: malformed: %s", where, describe(tm.Kind, "", ""), err)
	}
	for _, e := range strictErrs {
		if err := r.strictf("%s: %s: %s", where, describe(tm.Kind, "", ""), e); err != nil {
			return err
		}
	}
	itemKind := strings.TrimSuffix(tm.Kind, "List") // "" for a plain List
	for j, item := range list.Items {
		if err := r.readObject(file, fmt.Sprintf("%s: item %d", where, j), item, tm.APIVersion, itemKind); err != nil {
			return err
		}
	}
	return nil
}

// readObject decodes one object. listAPIVersion and listKind are the
// typed list's, which an item without its own takes.
func (r *reader) readObject(file, where string, raw json.RawMessage, listAPIVersion, listKind string) error {
	return r.apply(file, decodeObject(where, raw, listAPIVersion, listKind, nil))
}

// decoded is one object decoded, and what reading it adds to the reader.
type decoded struct {
	obj      runtime.Object
	skipped  string   // the apiVersion and kind of an object skipped
	inferred bool     // its kind was inferred from its fields
	ignored  string   // why it is ignored: its kind in the wrong case
	findings []string // unknown and duplicate fields, named
	err      error    // after the findings
	size     int64    // what obj takes (decodedSize)
	where    string   // obj's file, document or item
	what     string   // obj named ("pod default/a")
}

// apply adds what decoding an object of file found to the reader, as
// reading it would have, in the same order.
func (r *reader) apply(file string, d decoded) error {
	if d.inferred && !slices.Contains(r.inferred, file) {
		r.inferred = append(r.inferred, file)
	}
	if d.skipped != "" {
		r.skipped = append(r.skipped, d.skipped)
		return nil
	}
	if d.ignored != "" {
		r.ignored = append(r.ignored, d.ignored)
		return r.strictf("%s", d.ignored)
	}
	for _, f := range d.findings {
		if err := r.strictf("%s", f); err != nil {
			return err
		}
	}
	if d.err != nil {
		return d.err
	}
	r.decoded += d.size
	if max := r.opts.maxDecoded(); r.decoded > max {
		return decodedTooLarge(d.where, d.what, r.decoded, max)
	}
	r.objects = append(r.objects, d.obj)
	return nil
}

// decodeObject decodes one object as readObject does, touching no
// reader: it may run on any goroutine. quick, when not nil, is raw's
// type and name as the fast path found them (what decoding raw into a
// typeMeta gives), to be checked by decoding raw.
func decodeObject(where string, raw json.RawMessage, listAPIVersion, listKind string, quick *typeMeta) decoded {
	var tm typeMeta
	if quick != nil {
		tm = *quick
	} else if err := k8sjson.UnmarshalCaseSensitivePreserveInts(raw, &tm); err != nil {
		return decoded{err: fmt.Errorf("%s: malformed object: %s", where, friendly(err))}
	}
	var d decoded
	if tm.Kind == "" && listKind != "" {
		tm.Kind = listKind
		if tm.APIVersion == "" {
			tm.APIVersion = listAPIVersion
		}
	}
	if tm.Kind == "" {
		kind, ok := inferKind(raw)
		if !ok {
			return decoded{err: fmt.Errorf("%s: object %q has no kind", where, tm.Metadata.Name)}
		}
		tm.Kind, tm.APIVersion = kind, "v1"
		d.inferred = true
	}
	what := describe(tm.Kind, tm.Metadata.Namespace, tm.Metadata.Name)
	var obj runtime.Object
	switch tm.APIVersion + " " + tm.Kind {
	case "v1 Node":
		obj = &v1.Node{}
	case "v1 Pod":
		obj = &v1.Pod{}
	case "policy/v1 PodDisruptionBudget", "policy/v1beta1 PodDisruptionBudget":
		obj = &policyv1.PodDisruptionBudget{}
	case "v1 Namespace":
		obj = &v1.Namespace{}
	case "v1 PersistentVolumeClaim":
		obj = &v1.PersistentVolumeClaim{}
	case "v1 PersistentVolume":
		obj = &v1.PersistentVolume{}
	case "storage.k8s.io/v1 StorageClass":
		obj = &storagev1.StorageClass{}
	case "storage.k8s.io/v1 CSINode":
		obj = &storagev1.CSINode{}
	case "storage.k8s.io/v1 CSIDriver":
		obj = &storagev1.CSIDriver{}
	case "storage.k8s.io/v1 VolumeAttachment":
		obj = &storagev1.VolumeAttachment{}
	case "storage.k8s.io/v1 CSIStorageCapacity":
		obj = &storagev1.CSIStorageCapacity{}
	case "resource.k8s.io/v1 ResourceClaim":
		obj = &resourcev1.ResourceClaim{}
	case "resource.k8s.io/v1 ResourceClaimTemplate":
		obj = &resourcev1.ResourceClaimTemplate{}
	case "resource.k8s.io/v1 ResourceSlice":
		obj = &resourcev1.ResourceSlice{}
	case "resource.k8s.io/v1 DeviceClass":
		obj = &resourcev1.DeviceClass{}
	case "resource.k8s.io/v1 DeviceTaintRule":
		obj = &resourcev1.DeviceTaintRule{}
	case "scheduling.k8s.io/v1beta1 PodGroup":
		obj = &schedulingv1beta1.PodGroup{}
	case "scheduling.k8s.io/v1alpha3 PodGroup":
		obj = &schedulingv1alpha3.PodGroup{}
	case "scheduling.k8s.io/v1alpha3 CompositePodGroup":
		obj = &schedulingv1alpha3.CompositePodGroup{}
	default:
		if quick != nil {
			// Nothing will decode raw: take its type the general way,
			// which checks it.
			return decodeObject(where, raw, listAPIVersion, listKind, nil)
		}
		switch tm.Kind {
		case "ResourceClaim", "ResourceClaimTemplate", "ResourceSlice", "DeviceClass", "DeviceTaintRule":
			if strings.HasPrefix(tm.APIVersion, "resource.k8s.io/") {
				plural := map[string]string{"ResourceClaim": "resourceclaims", "ResourceClaimTemplate": "resourceclaimtemplates", "ResourceSlice": "resourceslices", "DeviceClass": "deviceclasses", "DeviceTaintRule": "devicetaintrules"}[tm.Kind]
				d.err = fmt.Errorf("%s: %s: unsupported apiVersion %q for kind %s: the loader reads resource.k8s.io/v1, which kube-scheduler %s reads (kubectl get %s.v1.resource.k8s.io asks for it)",
					where, what, tm.APIVersion, tm.Kind, preempt.CurrentRelease, plural)
				return d
			}
			d.err = fmt.Errorf("%s: %s: unsupported apiVersion %q for kind %s", where, what, tm.APIVersion, tm.Kind)
			return d
		case "Node", "Pod", "PodDisruptionBudget", "Namespace", "PersistentVolumeClaim", "PersistentVolume", "StorageClass", "CSINode", "CSIDriver", "VolumeAttachment", "CSIStorageCapacity", "PodGroup", "CompositePodGroup":
			d.err = fmt.Errorf("%s: %s: unsupported apiVersion %q for kind %s", where, what, tm.APIVersion, tm.Kind)
			return d
		}
		if right := rightKind(tm.Kind); right != "" {
			// Kinds are case-sensitive: the API server refuses "node".
			d.ignored = fmt.Sprintf("%s: %s: kind %q is not %s: kinds are case-sensitive; the object is ignored", where, what, tm.Kind, right)
			return d
		}
		d.skipped = strings.TrimSpace(tm.APIVersion + " " + tm.Kind)
		return d
	}
	var strictErrs []string
	if tm.APIVersion == "policy/v1beta1" {
		pdb, errs, err := convertV1beta1PDB(raw)
		if err != nil {
			d.err = fmt.Errorf("%s: %s: %w", where, what, err)
			return d
		}
		obj, strictErrs = pdb, errs
	} else {
		errs, err := decodeStrict(raw, obj)
		if err != nil {
			d.err = fmt.Errorf("%s: %s: %w", where, what, err)
			return d
		}
		strictErrs = errs
	}
	if pg, ok := obj.(*schedulingv1alpha3.PodGroup); ok {
		out, err := convertV1alpha3PodGroup(pg)
		if err != nil {
			d.err = fmt.Errorf("%s: %s: %w", where, what, err)
			return d
		}
		obj = out
	}
	for _, e := range strictErrs {
		d.findings = append(d.findings, fmt.Sprintf("%s: %s: %s", where, what, e))
	}
	if err := admit(obj); err != nil {
		d.err = fmt.Errorf("%s: %s: %w", where, what, err)
		return d
	}
	d.obj = obj
	d.size = decodedSize(obj)
	d.where, d.what = where, what
	return d
}

// decodeStrict decodes raw into obj as the API server does under strict
// field validation: an error names the field (never a Go type), and the
// findings, unknown and duplicate fields, name theirs.
func decodeStrict(raw []byte, obj any) ([]string, error) {
	errs, err := k8sjson.UnmarshalStrict(raw, obj)
	if err != nil {
		if _, _, _, _, typeErr := jsonTypeError(err); !typeErr {
			// A value the type decodes itself, a quantity or a time, gives
			// an error without its field.
			if path, e := badField(raw, reflect.TypeOf(obj)); path != "" && e != nil {
				msg := jsonMessage(e)
				if v, ok := timeValue(e); ok {
					msg = v + " is not a time in RFC 3339 form (2006-01-02T15:04:05Z)"
				}
				return nil, fmt.Errorf("%s (field %s)", msg, path)
			}
		}
		return nil, errors.New(friendly(err))
	}
	findings := make([]string, len(errs))
	for i, e := range errs {
		findings[i] = e.Error() + caseHint(e, reflect.TypeOf(obj))
	}
	return findings, nil
}

// inferKind names the kind of an object that carries none (the Insights
// Operator archives single objects so) from fields only that kind has: a
// Pod's spec.containers, a Node's status.nodeInfo.
func inferKind(raw json.RawMessage) (string, bool) {
	var o struct {
		Spec struct {
			Containers json.RawMessage `json:"containers"`
		} `json:"spec"`
		Status struct {
			NodeInfo json.RawMessage `json:"nodeInfo"`
		} `json:"status"`
	}
	if k8sjson.UnmarshalCaseSensitivePreserveInts(raw, &o) != nil {
		return "", false
	}
	switch {
	case len(o.Spec.Containers) > 0 && len(o.Status.NodeInfo) == 0:
		return "Pod", true
	case len(o.Status.NodeInfo) > 0 && len(o.Spec.Containers) == 0:
		return "Node", true
	}
	return "", false
}

// convertV1beta1PDB converts as the API server does: v1beta1 to the
// internal form to v1 (an empty v1beta1 selector matches no pod, and
// stays so in v1).
func convertV1beta1PDB(raw json.RawMessage) (*policyv1.PodDisruptionBudget, []string, error) {
	in := &policyv1beta1.PodDisruptionBudget{}
	strictErrs, err := decodeStrict(raw, in)
	if err != nil {
		return nil, nil, err
	}
	legacyscheme.Scheme.Default(in)
	internal := &policy.PodDisruptionBudget{}
	if err := legacyscheme.Scheme.Convert(in, internal, nil); err != nil {
		return nil, nil, fmt.Errorf("converting policy/v1beta1 to policy/v1: %w", err)
	}
	out := &policyv1.PodDisruptionBudget{}
	if err := legacyscheme.Scheme.Convert(internal, out, nil); err != nil {
		return nil, nil, fmt.Errorf("converting policy/v1beta1 to policy/v1: %w", err)
	}
	return out, strictErrs, nil
}

// convertV1alpha3PodGroup converts a scheduling.k8s.io/v1alpha3 PodGroup
// to v1beta1 (the version kube-scheduler v1.37 reads) as the API server
// does: defaulted, to the internal form, to v1beta1.
func convertV1alpha3PodGroup(in *schedulingv1alpha3.PodGroup) (*schedulingv1beta1.PodGroup, error) {
	legacyscheme.Scheme.Default(in)
	internal := &schedulingapi.PodGroup{}
	if err := legacyscheme.Scheme.Convert(in, internal, nil); err != nil {
		return nil, fmt.Errorf("converting scheduling.k8s.io/v1alpha3 to v1beta1: %w", err)
	}
	out := &schedulingv1beta1.PodGroup{}
	if err := legacyscheme.Scheme.Convert(internal, out, nil); err != nil {
		return nil, fmt.Errorf("converting scheduling.k8s.io/v1alpha3 to v1beta1: %w", err)
	}
	return out, nil
}

// admit applies the API server's defaulting and the checks the API server
// would have made of what the filters read: of the resource.k8s.io and
// storage kinds, its whole validation on create (validateAPI). A
// namespaced object without a namespace is in "default", as kubectl
// create puts it.
func admit(obj runtime.Object) error {
	if err := checkAnnotations(obj); err != nil {
		return err
	}
	if p, ok := obj.(*v1.Pod); ok {
		pullPolicies(p)
	}
	legacyscheme.Scheme.Default(obj)
	switch o := obj.(type) {
	case *v1.Node:
		o.TypeMeta = metav1.TypeMeta{}
	case *v1.Pod:
		o.TypeMeta = metav1.TypeMeta{}
		if o.Namespace == "" {
			o.Namespace = metav1.NamespaceDefault
		}
		if o.UID == "" {
			o.UID = types.UID("uid-" + o.Namespace + "-" + o.Name)
		}
		return checkPodSelectors(o)
	case *policyv1.PodDisruptionBudget:
		o.TypeMeta = metav1.TypeMeta{}
		if o.Namespace == "" {
			o.Namespace = metav1.NamespaceDefault
		}
		// The API server rejects an invalid selector; a dump holding one
		// was edited by hand, so say so rather than match nothing.
		if _, err := metav1.LabelSelectorAsSelector(o.Spec.Selector); err != nil {
			return fmt.Errorf("invalid selector: %w", err)
		}
	case *v1.PersistentVolumeClaim:
		if o.Namespace == "" {
			o.Namespace = metav1.NamespaceDefault
		}
	case *storagev1.CSIStorageCapacity:
		if o.Namespace == "" {
			o.Namespace = metav1.NamespaceDefault
		}
	case *resourcev1.ResourceClaim:
		if o.Namespace == "" {
			o.Namespace = metav1.NamespaceDefault
		}
	case *resourcev1.ResourceClaimTemplate:
		if o.Namespace == "" {
			o.Namespace = metav1.NamespaceDefault
		}
	case *schedulingv1beta1.PodGroup:
		o.TypeMeta = metav1.TypeMeta{}
		if o.Namespace == "" {
			o.Namespace = metav1.NamespaceDefault
		}
	case *schedulingv1alpha3.CompositePodGroup:
		o.TypeMeta = metav1.TypeMeta{}
		if o.Namespace == "" {
			o.Namespace = metav1.NamespaceDefault
		}
	}
	return validateAPI(obj)
}

// pullPolicies sets the image pull policy the defaults would set on every
// container that has none, from a memo of the images seen: the defaults
// parse each image name with regular expressions (a sixth of the time of
// loading a dump without the field, where one image serves thousands of
// pods). The value is the defaults' own (SetDefaults_Container).
func pullPolicies(p *v1.Pod) {
	set := func(c *v1.Container) {
		if c.ImagePullPolicy == "" {
			c.ImagePullPolicy = pullPolicy(c.Image)
		}
	}
	for i := range p.Spec.InitContainers {
		set(&p.Spec.InitContainers[i])
	}
	for i := range p.Spec.Containers {
		set(&p.Spec.Containers[i])
	}
	for i := range p.Spec.EphemeralContainers {
		set((*v1.Container)(&p.Spec.EphemeralContainers[i].EphemeralContainerCommon))
	}
}

var pullMemo struct {
	sync.Mutex
	m map[string]v1.PullPolicy
}

func pullPolicy(image string) v1.PullPolicy {
	pullMemo.Lock()
	pol, ok := pullMemo.m[image]
	pullMemo.Unlock()
	if ok {
		return pol
	}
	c := v1.Container{Image: image}
	k8sv1.SetDefaults_Container(&c)
	pullMemo.Lock()
	if pullMemo.m == nil || len(pullMemo.m) >= 4096 {
		pullMemo.m = map[string]v1.PullPolicy{}
	}
	pullMemo.m[image] = c.ImagePullPolicy
	pullMemo.Unlock()
	return c.ImagePullPolicy
}

func checkPodSelectors(p *v1.Pod) error {
	if a := p.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		if _, err := nodeaffinity.NewNodeSelector(a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution); err != nil {
			return fmt.Errorf("invalid required node affinity: %w", err)
		}
	}
	return nil
}

// cluster builds the cluster of the objects read, leaving out what
// kube-scheduler never sees, and validates it.
func (r *reader) cluster() (*preempt.Cluster, []string, error) {
	c := &preempt.Cluster{}
	nodes := map[string]bool{}
	for _, o := range r.objects {
		if n, ok := o.(*v1.Node); ok {
			nodes[n.Name] = true
		}
	}
	var terminal, offNode []string
	elsewhere := map[*v1.Pod]bool{} // kept, nominated to another input's node
	for _, o := range r.objects {
		switch o := o.(type) {
		case *v1.Node:
			c.Nodes = append(c.Nodes, o)
		case *v1.Pod:
			key := preempt.Key(o.Namespace, o.Name)
			switch {
			case o.Status.Phase == v1.PodSucceeded || o.Status.Phase == v1.PodFailed:
				terminal = append(terminal, key)
			case o.Spec.NodeName != "" && !nodes[o.Spec.NodeName]:
				offNode = append(offNode, fmt.Sprintf("%s (bound to %s)", key, o.Spec.NodeName))
			case o.Spec.NodeName == "" && o.Status.NominatedNodeName != "" && !nodes[o.Status.NominatedNodeName]:
				if r.opts.KeepNominated {
					c.Pods = append(c.Pods, o)
					elsewhere[o] = true
					continue
				}
				offNode = append(offNode, fmt.Sprintf("%s (nominated to %s)", key, o.Status.NominatedNodeName))
			default:
				c.Pods = append(c.Pods, o)
			}
		case *policyv1.PodDisruptionBudget:
			c.PDBs = append(c.PDBs, o)
		case *v1.Namespace:
			c.Namespaces = append(c.Namespaces, o)
		case *v1.PersistentVolumeClaim:
			c.PVCs = append(c.PVCs, o)
		case *v1.PersistentVolume:
			c.PVs = append(c.PVs, o)
		case *storagev1.StorageClass:
			c.StorageClasses = append(c.StorageClasses, o)
		case *storagev1.CSINode:
			c.CSINodes = append(c.CSINodes, o)
		case *storagev1.CSIDriver:
			c.CSIDrivers = append(c.CSIDrivers, o)
		case *storagev1.VolumeAttachment:
			c.VolumeAttachments = append(c.VolumeAttachments, o)
		case *storagev1.CSIStorageCapacity:
			c.CSIStorageCapacities = append(c.CSIStorageCapacities, o)
		case *resourcev1.ResourceClaim:
			c.ResourceClaims = append(c.ResourceClaims, o)
		case *resourcev1.ResourceClaimTemplate:
			c.ResourceClaimTemplates = append(c.ResourceClaimTemplates, o)
		case *resourcev1.ResourceSlice:
			c.ResourceSlices = append(c.ResourceSlices, o)
		case *resourcev1.DeviceClass:
			c.DeviceClasses = append(c.DeviceClasses, o)
		case *resourcev1.DeviceTaintRule:
			c.DeviceTaintRules = append(c.DeviceTaintRules, o)
		case *schedulingv1beta1.PodGroup:
			c.PodGroups = append(c.PodGroups, o)
		case *schedulingv1alpha3.CompositePodGroup:
			c.CompositePodGroups = append(c.CompositePodGroups, o)
		}
	}
	notes := append(append([]string(nil), r.notes...), r.warnings...)
	if len(r.inferred) > 0 {
		notes = append(notes, fmt.Sprintf("objects without kind taken as Node (they have status.nodeInfo) or Pod (spec.containers) in %d files: %s", len(r.inferred), abbreviate(r.inferred)))
	}
	if len(terminal) > 0 {
		notes = append(notes, fmt.Sprintf("left out %d pods in phase Succeeded or Failed, which kube-scheduler's informer never lists: %s", len(terminal), abbreviate(terminal)))
	}
	if len(offNode) > 0 {
		notes = append(notes, fmt.Sprintf("left out %d pods of nodes the dump does not hold, which kube-scheduler's snapshot never holds: %s", len(offNode), abbreviate(offNode)))
	}
	if len(r.skipped) > 0 {
		notes = append(notes, fmt.Sprintf("skipped %d objects of kinds the filters do not read: %s", len(r.skipped), countKinds(r.skipped)))
	}
	check := c
	if len(elsewhere) > 0 {
		cc := *c
		cc.Pods = nil
		for _, p := range c.Pods {
			if !elsewhere[p] {
				cc.Pods = append(cc.Pods, p)
			}
		}
		check = &cc
	}
	if err := check.Validate(); err != nil {
		return nil, nil, err
	}
	return c, notes, nil
}

func abbreviate(items []string) string {
	const most = 5
	if len(items) <= most {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:most], ", "), len(items)-most)
}

func countKinds(kinds []string) string {
	count := map[string]int{}
	for _, k := range kinds {
		count[k]++
	}
	names := make([]string, 0, len(count))
	for k := range count {
		names = append(names, k)
	}
	sort.Strings(names)
	var parts []string
	for _, k := range names {
		parts = append(parts, fmt.Sprintf("%d %s", count[k], k))
	}
	return strings.Join(parts, ", ")
}

// listEnvelope is a kubectl List's own fields, its items left raw.
type listEnvelope struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   metav1.ListMeta   `json:"metadata"`
	Items      []json.RawMessage `json:"items"`
}

// plural is "1 file", "2 files".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
