package loader

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8sjson "sigs.k8s.io/json"
)

// MaxObjectBytes bounds the text of any one object of an input (a List's
// item, a document, the -pod file's Pod). The API server stores no
// object that large: etcd takes a request of at most 1.5 MiB by default
// (--max-request-bytes), kube-apiserver a request body of at most 3 MiB;
// the bound leaves room for the indentation of pretty-printed JSON and
// YAML, which the stored form does not have. Decoding an object takes
// many times its text (a 250 MB annotation took 2 GB): checkObjectSizes
// refuses one over the bound from the bytes, before any decoding, so that
// what a file costs is proportional to its size, whatever is in it.
const MaxObjectBytes = 16 << 20

// MaxObjectDenseBytes bounds the text of any one object less its
// whitespace. kube-apiserver takes a request body of at most 3 MiB, and
// etcd stores at most 1.5 MiB of protobuf, a little more as JSON: no
// object the API server stores is near 4 MiB of JSON less indentation.
// MaxObjectBytes alone let one object of 16 MiB of dense text (millions
// of empty tolerations, "{},") decode to some 480 MiB before the loader
// counted it (1.0 GB peak in JSON, 1.25 GB in YAML's flow style); under
// this bound such an object takes at most some 120 MiB.
const MaxObjectDenseBytes = 4 << 20

// dense is the bytes of b that are not whitespace.
func dense(b []byte) int {
	n := 0
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			n++
		}
	}
	return n
}

// objectTooDense is the refusal of one object over MaxObjectDenseBytes.
func objectTooDense(where, what string, size int) error {
	return fmt.Errorf("%s: %s is %d bytes of text less whitespace, more than %d (%d MiB), the limit on one object: the API server stores none that large "+
		"(kube-apiserver takes a request body of 3 MiB, etcd 1.5 MiB by default); refused before decoding", where, what, size, MaxObjectDenseBytes, MaxObjectDenseBytes>>20)
}

// objectTooLarge is the refusal of one object over MaxObjectBytes.
func objectTooLarge(where, what string, size int) error {
	return fmt.Errorf("%s: %s is %d bytes of text, more than %d (%d MiB), the limit on one object: the API server stores none that large "+
		"(etcd takes 1.5 MiB by default, kube-apiserver a request body of 3 MiB); refused before decoding", where, what, size, MaxObjectBytes, MaxObjectBytes>>20)
}

// checkAnnotations refuses an object whose annotations are over the API
// server's limit (apimachinery's TotalAnnotationSizeLimitB, 256 KiB, as
// its ValidateAnnotationsSize counts them), which no stored object is.
func checkAnnotations(obj runtime.Object) error {
	m, ok := obj.(metav1.Object)
	if !ok {
		return nil
	}
	if err := apivalidation.ValidateAnnotationsSize(m.GetAnnotations()); err != nil {
		return fmt.Errorf("metadata.annotations: %w bytes (apimachinery's TotalAnnotationSizeLimitB, which the API server enforces on every object)", err)
	}
	return nil
}

// checkObjectSizes refuses an object of data whose text is over
// MaxObjectBytes, scanning its bytes without decoding: the items of a
// List (JSON, or YAML's block sequence under a top-level "items:"), the
// rest of a List, every other document (of a YAML stream, a JSON stream
// or a JSON array) whole. What it cannot split it measures whole: a flow
// YAML document that is not JSON, a List whose items are not a block
// sequence, counts as one object. Malformed JSON it leaves to the
// decoders, which say what is wrong.
func checkObjectSizes(file string, data []byte) error {
	if len(data) <= MaxObjectDenseBytes {
		return nil // no object in it can be larger
	}
	first := bytes.TrimLeft(data, " \t\r\n")
	if len(first) > 0 && (first[0] == '{' || first[0] == '[') {
		s := jsonScan{file: file, data: data}
		if ok, err := s.stream(); ok {
			return err
		}
		if !yamlMarker.Match(data) {
			// Malformed JSON, which the decoders refuse, naming where.
			return nil
		}
		// YAML documents in flow style, which go-yaml reads.
	}
	return checkYAMLSizes(file, data)
}

// jsonScan walks JSON text, finding the extent of each object.
type jsonScan struct {
	file string
	data []byte
	i    int
	doc  int // documents seen
}

// errNotJSON is the scan's giving up: the text is not JSON.
type errNotJSON struct{}

func (s *jsonScan) space() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		case '-', '.':
			// A YAML marker between JSON values ("---"): skipped to the
			// end of its line.
			if s.i > 0 && s.data[s.i-1] != '\n' {
				return
			}
			if !bytes.HasPrefix(s.data[s.i:], []byte("---")) && !bytes.HasPrefix(s.data[s.i:], []byte("...")) {
				return
			}
			for s.i < len(s.data) && s.data[s.i] != '\n' {
				s.i++
			}
		default:
			return
		}
	}
}

// stream scans every top-level value; ok is false when data is not JSON
// (maybe YAML in flow style).
func (s *jsonScan) stream() (ok bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			if _, giveUp := r.(errNotJSON); !giveUp {
				panic(r)
			}
			ok, err = false, nil
		}
	}()
	for s.space(); s.i < len(s.data); s.space() {
		if s.data[s.i] == '[' {
			// An array of documents.
			s.i++
			for s.space(); s.peek() != ']'; s.space() {
				if err := s.document(); err != nil {
					return true, err
				}
				s.space()
				if s.peek() == ',' {
					s.i++
				}
			}
			s.i++
			continue
		}
		if err := s.document(); err != nil {
			return true, err
		}
	}
	return true, nil
}

func (s *jsonScan) peek() byte {
	if s.i >= len(s.data) {
		panic(errNotJSON{})
	}
	return s.data[s.i]
}

// document scans one document: a List's items and the rest are measured
// apart, anything else whole.
func (s *jsonScan) document() error {
	s.doc++
	start := s.i
	if s.peek() != '{' {
		s.value()
		return nil
	}
	s.i++
	itemsLen, itemsDense := 0, 0
	for s.space(); s.peek() != '}'; s.space() {
		ks, ke := s.str()
		s.space()
		if s.peek() != ':' {
			panic(errNotJSON{})
		}
		s.i++
		s.space()
		if string(s.data[ks:ke]) == `"items"` && s.peek() == '[' {
			is := s.i
			s.i++
			for n := 0; ; n++ {
				s.space()
				if s.peek() == ']' {
					break
				}
				itemStart := s.i
				s.value()
				if s.i-itemStart > MaxObjectBytes {
					return objectTooLarge(s.where(itemStart, n), jsonWhat(s.data[itemStart:s.i]), s.i-itemStart)
				}
				d := dense(s.data[itemStart:s.i])
				if d > MaxObjectDenseBytes {
					return objectTooDense(s.where(itemStart, n), jsonWhat(s.data[itemStart:s.i]), d)
				}
				itemsDense += d
				s.space()
				if s.peek() == ',' {
					s.i++
				}
			}
			s.i++
			itemsLen += s.i - is
		} else {
			s.value()
		}
		s.space()
		if s.peek() == ',' {
			s.i++
		}
	}
	s.i++
	if n := s.i - start - itemsLen; n > MaxObjectBytes {
		return objectTooLarge(s.where(start, -1), jsonWhat(s.data[start:s.i]), n)
	}
	if n := dense(s.data[start:s.i]) - itemsDense; n > MaxObjectDenseBytes {
		return objectTooDense(s.where(start, -1), jsonWhat(s.data[start:s.i]), n)
	}
	return nil
}

// where names the document (and item) starting at offset off.
func (s *jsonScan) where(off, item int) string {
	w := fmt.Sprintf("%s:%d", s.file, 1+bytes.Count(s.data[:off], []byte("\n")))
	if item >= 0 {
		w += fmt.Sprintf(": item %d", item)
	} else {
		w += fmt.Sprintf(": document %d", s.doc)
	}
	return w
}

// jsonWhat names the object of raw ("pod default/a"): its type and name
// are decoded, nothing else (the decoder skips the other fields, copying
// nothing).
func jsonWhat(raw []byte) string {
	var tm typeMeta
	_ = k8sjson.UnmarshalCaseSensitivePreserveInts(raw, &tm)
	return describe(tm.Kind, tm.Metadata.Namespace, tm.Metadata.Name)
}

// str scans a string, returning its extent, quotes included.
func (s *jsonScan) str() (int, int) {
	start := s.i
	if s.peek() != '"' {
		panic(errNotJSON{})
	}
	for s.i++; ; s.i++ {
		j := bytes.IndexAny(s.data[s.i:], `"\\`)
		if j < 0 {
			panic(errNotJSON{})
		}
		s.i += j
		if s.data[s.i] == '"' {
			s.i++
			return start, s.i
		}
		s.i++ // the escaped character
	}
}

// value scans any value.
func (s *jsonScan) value() {
	switch c := s.peek(); c {
	case '"':
		s.str()
	case '{', '[':
		depth := 0
		for {
			switch s.peek() {
			case '"':
				s.str()
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
			s.i++
			if depth == 0 {
				return
			}
		}
	default:
		// A number, true, false or null.
		start := s.i
		for s.i < len(s.data) && bytes.IndexByte([]byte(" \t\r\n,]}"), s.data[s.i]) < 0 {
			s.i++
		}
		if s.i == start {
			panic(errNotJSON{})
		}
	}
}

// checkYAMLSizes is checkObjectSizes on YAML: documents are split at
// lines starting with "---" or "...", a List's items are the entries of
// the block sequence under its top-level "items:" key (at any
// indentation), and a document whose top level is a block sequence has
// its entries for objects. It reads lines once, keeping none.
func checkYAMLSizes(file string, data []byte) error {
	const (
		top        = iota // before the top level's items, if any
		afterItems        // after "items:", before its first entry
		inItems
		rest
	)
	var (
		doc                 = 0
		docStart, docLine   = 0, 1
		phase               = top
		seqIndent           = -1
		itemStart, itemLine = -1, 0
		item                = -1
		itemsLen            = 0
		itemsDense          = 0
		content             = false // the document has a line of content
	)
	endItem := func(end int) error {
		if itemStart < 0 {
			return nil
		}
		sz := end - itemStart
		itemsLen += sz
		if sz > MaxObjectBytes {
			return objectTooLarge(fmt.Sprintf("%s:%d: item %d", file, itemLine, item), yamlWhat(data[itemStart:end], true), sz)
		}
		d := dense(data[itemStart:end])
		itemsDense += d
		if d > MaxObjectDenseBytes {
			return objectTooDense(fmt.Sprintf("%s:%d: item %d", file, itemLine, item), yamlWhat(data[itemStart:end], true), d)
		}
		itemStart = -1
		return nil
	}
	endDocument := func(end int) error {
		if err := endItem(end); err != nil {
			return err
		}
		if content {
			doc++
			n := end - docStart - itemsLen
			tooDense := false
			if n <= MaxObjectBytes {
				n = dense(data[docStart:end]) - itemsDense
				tooDense = n > MaxObjectDenseBytes
			}
			if n > MaxObjectBytes || tooDense {
				what := "the document"
				if itemsLen > 0 {
					what = "the document less its items"
				} else if d := data[docStart:end]; bytes.HasPrefix(bytes.TrimLeft(d, " \t\r\n"), []byte("{")) {
					what = jsonWhat(bytes.TrimLeft(d, " \t\r\n"))
				} else {
					what = yamlWhat(d, false)
				}
				if strings.HasSuffix(what, "list") {
					// Its items are in flow style (items: [...]): not split.
					what += " (its items in flow style, measured with it: write them as a block sequence, as kubectl does, or as JSON)"
				}
				if tooDense {
					return objectTooDense(fmt.Sprintf("%s:%d: document %d", file, docLine, doc), what, n)
				}
				return objectTooLarge(fmt.Sprintf("%s:%d: document %d", file, docLine, doc), what, n)
			}
		}
		return nil
	}
	number := 0
	for i := 0; i < len(data); {
		// One line: to LF, CR LF or a lone CR.
		e := i + bytes.IndexByte(data[i:], '\n')
		if e < i {
			e = len(data)
		}
		if cr := bytes.IndexByte(data[i:e], '\r'); cr >= 0 && i+cr+1 < e {
			e = i + cr // a lone CR
		}
		next := e + 1
		number++
		start := i
		indent := 0
		for i+indent < e && data[i+indent] == ' ' {
			indent++
		}
		t := bytes.TrimRight(data[i+indent:e], " \t\r")
		i = next
		if len(t) == 0 || t[0] == '#' {
			continue
		}
		if indent == 0 && (bytes.HasPrefix(t, []byte("---")) || bytes.HasPrefix(t, []byte("..."))) && (len(t) == 3 || t[3] == ' ' || t[3] == '\t') {
			if err := endDocument(start); err != nil {
				return err
			}
			docStart, docLine, phase, seqIndent, item, itemsLen, itemsDense, content = start, number, top, -1, -1, 0, 0, false
			continue
		}
		content = true
		switch phase {
		case top:
			if indent != 0 {
				continue
			}
			if isEntry(t) {
				phase, seqIndent = inItems, 0
			} else if string(t) == "items:" {
				phase = afterItems
				continue
			} else {
				continue
			}
		case afterItems:
			if !isEntry(t) {
				phase = rest
				continue
			}
			phase, seqIndent = inItems, indent
		case rest:
			continue
		}
		// In the items.
		if indent == seqIndent && isEntry(t) {
			if err := endItem(start); err != nil {
				return err
			}
			item++
			itemStart, itemLine = start, number
		} else if indent <= seqIndent {
			if err := endItem(start); err != nil {
				return err
			}
			phase = rest
		}
	}
	return endDocument(len(data))
}

// isEntry reports a block sequence entry's line: "- x", or "-" alone.
func isEntry(t []byte) bool {
	return len(t) > 0 && t[0] == '-' && (len(t) == 1 || t[1] == ' ' || t[1] == '\t')
}

// yamlWhat names the object of a document, or of a sequence entry (its
// text from its "-") when entry: its kind and its metadata's name and
// namespace, when written plainly.
func yamlWhat(text []byte, entry bool) string {
	keyIndent, metaIndent := -1, -1
	var kind, name, namespace string
	inMeta := false
	for k := 0; len(text) > 0; k++ {
		line := text
		if e := bytes.IndexByte(text, '\n'); e >= 0 {
			line, text = text[:e], text[e+1:]
		} else {
			text = nil
		}
		indent := 0
		for indent < len(line) && line[indent] == ' ' {
			indent++
		}
		t := bytes.TrimRight(line[indent:], " \t\r")
		if len(t) == 0 || t[0] == '#' || !entry && indent == 0 && (bytes.HasPrefix(t, []byte("---")) || bytes.HasPrefix(t, []byte("..."))) {
			continue
		}
		if k == 0 && entry {
			// "- key: value": the key's indentation.
			i := 1
			for i < len(t) && t[i] == ' ' {
				i++
			}
			t, indent = t[i:], indent+i
			keyIndent = indent
		} else if keyIndent < 0 {
			keyIndent = indent
		}
		if len(t) > 1024 {
			continue // a long value: not a name
		}
		key, value, _ := bytes.Cut(t, []byte(":"))
		value = bytes.TrimSpace(value)
		if u, err := strconv.Unquote(string(value)); err == nil {
			value = []byte(u)
		} else if len(value) > 1 && value[0] == '\'' && value[len(value)-1] == '\'' {
			value = value[1 : len(value)-1]
		}
		switch {
		case indent == keyIndent:
			inMeta = string(key) == "metadata"
			if string(key) == "kind" {
				kind = string(value)
			}
		case inMeta && (metaIndent < 0 || indent == metaIndent):
			metaIndent = indent
			switch string(key) {
			case "name":
				name = string(value)
			case "namespace":
				namespace = string(value)
			}
		}
	}
	return describe(kind, namespace, name)
}
