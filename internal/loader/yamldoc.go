package loader

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v2"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// This file reads YAML as kubectl does (sigs.k8s.io/yaml: go-yaml v2,
// YAML 1.1, then JSON), with three things sigs.k8s.io/yaml.YAMLToJSON
// does not give: the path of every duplicate field, keys that collide in
// JSON (1 and "1") resolved in document order rather than in Go's map
// order, and a bound on what YAML aliases may expand a document to.

// aliasExpansion bounds a YAML document's JSON form: at most this many
// times the document's size, plus aliasSlack. A document without aliases
// stays far below it (a JSON form is at most some 12 times its YAML in
// this count, for documents of one-character list items); aliases to
// aliases grow exponentially ("billion laughs") and to a long string
// linearly in the number of aliases, and are refused beyond it.
const (
	aliasExpansion = 16
	aliasSlack     = 64 << 10
)

// normalizeText returns data as UTF-8 without a byte order mark: UTF-16
// with a byte order mark (what PowerShell's > writes) is converted, as
// go-yaml converts it.
func normalizeText(data []byte) []byte {
	switch {
	case bytes.HasPrefix(data, []byte{0xEF, 0xBB, 0xBF}):
		return data[3:]
	case bytes.HasPrefix(data, []byte{0xFF, 0xFE}), bytes.HasPrefix(data, []byte{0xFE, 0xFF}):
		little := data[0] == 0xFF
		data = data[2:]
		u := make([]uint16, len(data)/2)
		for i := range u {
			if little {
				u[i] = uint16(data[2*i]) | uint16(data[2*i+1])<<8
			} else {
				u[i] = uint16(data[2*i])<<8 | uint16(data[2*i+1])
			}
		}
		return []byte(string(utf16.Decode(u)))
	}
	return data
}

// hasUTF16BOM reports data starting with a UTF-16 byte order mark.
func hasUTF16BOM(data []byte) bool {
	return bytes.HasPrefix(data, []byte{0xFF, 0xFE}) || bytes.HasPrefix(data, []byte{0xFE, 0xFF})
}

// yamlPiece is one document of a YAML stream, and the line of the file
// it starts on.
type yamlPiece struct {
	data []byte
	line int
}

// splitYAML splits a YAML stream into its documents with apimachinery's
// YAMLReader, kubectl's, which splits at lines starting with "---" (a
// comment may follow). YAML's other markers are first written in that
// form, line by line (readerForm).
func splitYAML(data []byte) ([]yamlPiece, error) {
	text, lines, err := readerForm(data)
	if err != nil {
		return nil, err
	}
	rd := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(text)))
	var pieces []yamlPiece
	textLines := bytes.SplitAfter(text, []byte("\n"))
	next := 0 // the next line of text the reader has not returned
	for {
		p, err := rd.Read()
		if err == io.EOF {
			return pieces, nil
		}
		if err != nil {
			return nil, err
		}
		// The reader returns every line but the markers, in order.
		for next < len(textLines) && bytes.HasPrefix(textLines[next], []byte("---")) {
			next++
		}
		line := 1
		if next < len(lines) {
			line = lines[next]
		}
		pieces = append(pieces, yamlPiece{p, line})
		next += bytes.Count(p, []byte("\n"))
	}
}

// readerForm writes YAML's markers as apimachinery's YAMLReader reads them,
// and returns the line of data each line of text comes from. Line breaks
// are YAML's: CR LF, CR and NEL (U+0085) become LF, as go-yaml reads them.
// A line starting with "---" or "..." and then nothing, a space or a tab
// is a marker: "---" alone, with what follows it on a line of its own (a
// comment dropped); directive lines ("%YAML 1.2") before a document's
// content become comments (go-yaml v2 reads only %YAML 1.1). Another line
// starting with "---" ("----") is refused: the reader would take it for
// a marker.
func readerForm(data []byte) ([]byte, []int, error) {
	if bytes.ContainsAny(data, "\r\u0085") {
		data = []byte(strings.NewReplacer("\r\n", "\n", "\r", "\n", "\u0085", "\n").Replace(string(data)))
	}
	all := bytes.Split(data, []byte("\n"))
	if len(all) > 1 && len(all[len(all)-1]) == 0 {
		all = all[:len(all)-1]
	}
	var text bytes.Buffer
	text.Grow(len(data) + 1)
	lines := make([]int, 0, len(all))
	write := func(b []byte, n int) {
		text.Write(b)
		text.WriteByte('\n')
		lines = append(lines, n)
	}
	content := false // in a document, past its directives
	for i, line := range all {
		n := i + 1
		if rest, ok := cutMarker(line); ok {
			write([]byte("---"), n)
			content = false
			if len(rest) > 0 && rest[0] != '#' {
				write(rest, n) // content on the marker line: "--- {a: 1}"
				content = true
			}
			continue
		}
		switch {
		case bytes.HasPrefix(line, []byte("---")):
			return nil, nil, fmt.Errorf("line %d starts with --- but is not a document marker (--- then a space, a tab or nothing)", n)
		case len(line) > 0 && line[0] == '%' && !content:
			line = append([]byte("# "), line...)
		case len(bytes.TrimSpace(line)) > 0:
			content = true
		}
		write(line, n)
	}
	return text.Bytes(), lines, nil
}

// cutMarker reports a document marker line, "---" or "...", and what
// follows it on the line.
func cutMarker(line []byte) (rest []byte, ok bool) {
	for _, m := range []string{"---", "..."} {
		if bytes.HasPrefix(line, []byte(m)) && (len(line) == 3 || line[3] == ' ' || line[3] == '\t') {
			return bytes.TrimSpace(line[3:]), true
		}
	}
	return nil, false
}

// hasContent reports a piece holding more than blank lines and comments.
func (p yamlPiece) hasContent() bool {
	for _, l := range strings.Split(string(p.data), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			return true
		}
	}
	return false
}

// countYAMLDocuments counts the documents go-yaml finds in data, without
// decoding them.
func countYAMLDocuments(data []byte) (int, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	n := 0
	for {
		var s skipDocument
		err := dec.Decode(&s)
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		n++
	}
}

type skipDocument struct{}

func (*skipDocument) UnmarshalYAML(func(any) error) error { return nil }

// yamlDoc is one YAML document read: its JSON form (nil for an empty or
// null document) and its duplicate fields.
type yamlDoc struct {
	json  []byte
	dups  []yamlDup
	spent int64 // of the alias budget
}

// yamlDup is a duplicate field: its path in the document ("spec.priority",
// "items[3].metadata.name"), or go-yaml's own words when the document's
// merge keys ("<<") make the path unknown.
type yamlDup struct {
	path, message string
}

// topDocument decodes a document's top level: a mapping as a MapSlice
// (nested mappings then decode as MapSlices too, keeping every key in
// order, duplicates included), anything else as itself.
type topDocument struct {
	seen, isMap bool
	m           yaml.MapSlice
	other       any
}

func (t *topDocument) UnmarshalYAML(unmarshal func(any) error) error {
	t.seen = true // not called for a null document
	// Only a mapping decodes into a struct: a sequence decodes into
	// MapSlice too (empty, or of items with the fields key and value),
	// which would read "[]" as {}. The probe walks the top keys only.
	var probe struct{}
	if unmarshal(&probe) == nil {
		if err := unmarshal(&t.m); err != nil {
			return err
		}
		if len(t.m) == 0 {
			// {}, or a null go-yaml resolves but calls this for ("Null",
			// "NULL"), which the probe takes too.
			var v any
			if unmarshal(&v) == nil && v == nil {
				return nil
			}
		}
		t.isMap = true
		return nil
	}
	// A sequence's items are read the same way, so that a mapping in it
	// keeps its keys, duplicates included ("- {e, e}").
	var seq []topDocument
	if unmarshal(&seq) == nil {
		items := make([]any, len(seq))
		for i, e := range seq {
			items[i] = e.value()
		}
		t.other = items
		return nil
	}
	return unmarshal(&t.other)
}

// value is what the document holds.
func (t topDocument) value() any {
	if t.isMap {
		return t.m
	}
	return t.other
}

// readYAMLDocument converts one YAML document to JSON as
// sigs.k8s.io/yaml.YAMLToJSON does, finding duplicate fields and bounding
// alias expansion.
//
// firstLine is the line of the file the document starts on, which go-yaml's
// line numbers are made relative to.
func readYAMLDocument(doc []byte, firstLine int) (yamlDoc, error) {
	if bytes.Contains(doc, []byte("<<")) {
		return readYAMLMerging(doc, firstLine)
	}
	var top topDocument
	if err := yaml.Unmarshal(doc, &top); err != nil {
		return yamlDoc{}, yamlError(err, firstLine)
	}
	if !top.seen || top.value() == nil {
		return yamlDoc{}, nil // a null document
	}
	c := newConverter(doc)
	v := top.value()
	out, err := c.value(v)
	if err != nil {
		return yamlDoc{}, nameObject(v, err)
	}
	j, err := json.Marshal(out)
	if err != nil {
		return yamlDoc{}, fmt.Errorf("malformed YAML: %s", jsonMessage(err))
	}
	return yamlDoc{json: j, dups: c.dups, spent: c.limit - c.budget}, nil
}

// readYAMLItems reads n items of a List's top-level block sequence (their
// lines, from the first one's "- ") as readYAMLDocument reads them within
// their document, and passes each item's JSON (lent for the call) and its
// type and name (when they are plain strings) to item; it returns the
// alias budget they spent. It reports false, and so may item: an item
// that is not a mapping, or with duplicate fields, or that go-yaml
// refuses apart (an alias to an anchor outside them), is for the general
// reader. Their budget has no slack: the items and the rest of the
// document together stay within the document's.
func readYAMLItems(text []byte, n int, item func(i int, json []byte, tm *typeMeta) bool) (int64, bool) {
	var seq []yaml.MapSlice
	if yaml.Unmarshal(text, &seq) != nil || len(seq) != n {
		return 0, false
	}
	limit := aliasExpansion * int64(len(text))
	c := &converter{budget: limit, limit: limit}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for i, m := range seq {
		if len(m) == 0 {
			return 0, false
		}
		buf.Reset()
		if c.write(&buf, enc, m) != nil || !item(i, buf.Bytes(), plainTypeMeta(m)) {
			return 0, false
		}
		seq[i] = nil // for the collector
	}
	return c.limit - c.budget, true
}

// errFast is write's giving up.
var errFast = errors.New("not on the fast path")

// write writes v's JSON as json.Marshal writes c.value's (keys in order,
// each value as encoding/json writes it), spending the same budget, with
// no map between; it gives up (errFast) on duplicate keys, which it
// leaves to value.
func (c *converter) write(buf *bytes.Buffer, enc *json.Encoder, v any) error {
	scalar := func(v any) error {
		if err := enc.Encode(v); err != nil {
			return err
		}
		buf.Truncate(buf.Len() - 1) // Encode's line break
		return nil
	}
	switch v := v.(type) {
	case yaml.MapSlice:
		if err := c.spend(2); err != nil {
			return err
		}
		type entry struct {
			key   string
			value any
		}
		entries := make([]entry, len(v))
		for i, it := range v {
			k, err := c.key(it.Key)
			if err != nil {
				return err
			}
			entries[i] = entry{k, it.Value}
		}
		slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.key, b.key) })
		buf.WriteByte('{')
		for i, e := range entries {
			if i > 0 {
				if e.key == entries[i-1].key {
					return errFast
				}
				buf.WriteByte(',')
			}
			if err := c.spend(len(e.key) + 4); err != nil {
				return err
			}
			if err := scalar(e.key); err != nil {
				return err
			}
			buf.WriteByte(':')
			if err := c.write(buf, enc, e.value); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
		return nil
	case []any:
		if err := c.spend(2); err != nil {
			return err
		}
		buf.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := c.write(buf, enc, e); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
		return nil
	case map[any]any:
		return errFast // merged keys: value orders them
	case string:
		if err := c.spend(len(v) + 3); err != nil {
			return err
		}
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return errFast
		}
		if err := c.spend(24); err != nil {
			return err
		}
	default:
		if err := c.spend(24); err != nil {
			return err
		}
	}
	return scalar(v)
}

// plainTypeMeta is the type and name of a mapping, when each is absent
// or a valid UTF-8 string (as decoding its JSON would find them), else
// nil.
func plainTypeMeta(m yaml.MapSlice) *typeMeta {
	var tm typeMeta
	str := func(v any, key string, s *string) bool {
		switch v := lookupValue(v, key).(type) {
		case nil:
			return true
		case string:
			*s = v
			return utf8.ValidString(v)
		}
		return false
	}
	if !str(m, "apiVersion", &tm.APIVersion) || !str(m, "kind", &tm.Kind) {
		return nil
	}
	switch meta := lookupValue(m, "metadata").(type) {
	case nil:
	case yaml.MapSlice:
		if !str(meta, "name", &tm.Metadata.Name) || !str(meta, "namespace", &tm.Metadata.Namespace) {
			return nil
		}
	default:
		return nil
	}
	return &tm
}

// readYAMLMerging reads a document that may hold merge keys ("<<"), which
// go-yaml applies only when decoding into maps: duplicates are go-yaml's
// strict findings, by line.
func readYAMLMerging(doc []byte, firstLine int) (yamlDoc, error) {
	var v any
	var dups []yamlDup
	if err := yaml.UnmarshalStrict(doc, &v); err != nil {
		var te *yaml.TypeError
		if !errors.As(err, &te) {
			return yamlDoc{}, yamlError(err, firstLine)
		}
		for _, e := range te.Errors {
			if !yamlDuplicateKey(e) {
				return yamlDoc{}, yamlError(err, firstLine)
			}
			e = fileLines(e, firstLine)
			if !slices.Contains(dups, yamlDup{message: e}) {
				dups = append(dups, yamlDup{message: e})
			}
		}
		v = nil
		if err := yaml.Unmarshal(doc, &v); err != nil { // the last value wins
			return yamlDoc{}, yamlError(err, firstLine)
		}
	}
	if v == nil {
		return yamlDoc{}, nil
	}
	c := newConverter(doc)
	out, err := c.value(v)
	if err != nil {
		return yamlDoc{}, nameObject(v, err)
	}
	j, err := json.Marshal(out)
	if err != nil {
		return yamlDoc{}, fmt.Errorf("malformed YAML: %s", jsonMessage(err))
	}
	return yamlDoc{json: j, dups: append(dups, c.dups...), spent: c.limit - c.budget}, nil
}

// yamlError rewrites go-yaml's errors without Go types, and with the
// file's line numbers.
func yamlError(err error, firstLine int) error {
	if yamlInvalidMapKey(err) {
		return errors.New("malformed YAML: a list or a mapping used as a key")
	}
	return fmt.Errorf("malformed YAML: %s", fileLines(yamlMessage(err), firstLine))
}

// fileLines makes go-yaml's line numbers, of a document starting at line
// firstLine of a file, the file's.
func fileLines(msg string, firstLine int) string {
	return yamlLine.ReplaceAllStringFunc(msg, func(m string) string {
		n, err := strconv.Atoi(strings.TrimPrefix(m, "line "))
		if err != nil {
			return m
		}
		return "line " + strconv.Itoa(n+firstLine-1)
	})
}

// converter turns go-yaml's values into JSON's, as sigs.k8s.io/yaml's
// convertToJSONableObject does without a target type, recording
// duplicate keys and spending a budget of JSON bytes.
type converter struct {
	budget, limit int64
	path          []string
	dups          []yamlDup
}

func newConverter(doc []byte) *converter {
	limit := aliasExpansion*int64(len(doc)) + aliasSlack
	return &converter{budget: limit, limit: limit}
}

func (c *converter) pathString() string { return joinPath(c.path) }

// joinPath writes a path as sigs.k8s.io/json's strict errors do:
// "spec.containers[0].name".
func joinPath(path []string) string {
	var b strings.Builder
	for _, p := range path {
		if b.Len() > 0 && !strings.HasPrefix(p, "[") {
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	return b.String()
}

func (c *converter) errorf(format string, a ...any) error {
	return &fieldError{path: append([]string(nil), c.path...), msg: fmt.Sprintf(format, a...)}
}

// fieldError is a conversion error at a path of the document.
type fieldError struct {
	path []string
	msg  string
}

func (e *fieldError) Error() string {
	if p := joinPath(e.path); p != "" {
		return fmt.Sprintf("field %s: %s", p, e.msg)
	}
	return e.msg
}

// nameObject prefixes a conversion error with the object it is in: the
// document's, or the list item's ("item 3: pod default/a: field ...").
func nameObject(doc any, err error) error {
	fe, ok := err.(*fieldError)
	if !ok {
		return err
	}
	kind := lookup(doc, "kind")
	if strings.HasSuffix(kind, "List") && len(fe.path) >= 2 && fe.path[0] == "items" {
		if i, err := strconv.Atoi(strings.Trim(fe.path[1], "[]")); err == nil {
			var item any
			if items, ok := lookupValue(doc, "items").([]any); ok && i < len(items) {
				item = items[i]
			}
			itemKind := lookup(item, "kind")
			if itemKind == "" {
				itemKind = strings.TrimSuffix(kind, "List")
			}
			meta := lookupValue(item, "metadata")
			return fmt.Errorf("item %d: %s: %w", i, describe(itemKind, lookup(meta, "namespace"), lookup(meta, "name")), &fieldError{fe.path[2:], fe.msg})
		}
	}
	meta := lookupValue(doc, "metadata")
	return fmt.Errorf("%s: %w", describe(kind, lookup(meta, "namespace"), lookup(meta, "name")), fe)
}

// lookupValue is a mapping's value for key, as go-yaml decoded it.
func lookupValue(v any, key string) any {
	switch m := v.(type) {
	case yaml.MapSlice:
		var found any
		for _, it := range m {
			if k, ok := it.Key.(string); ok && k == key {
				found = it.Value // the last one wins, as in JSON
			}
		}
		return found
	case map[any]any:
		return m[key]
	}
	return nil
}

// lookup is a mapping's string value for key, or "".
func lookup(v any, key string) string {
	s, _ := lookupValue(v, key).(string)
	return s
}

func (c *converter) spend(n int) error {
	c.budget -= int64(n)
	if c.budget < 0 {
		return fmt.Errorf("its YAML aliases expand it past %d bytes of JSON (%d times its size, and %d KiB): refused as an alias bomb", c.limit, aliasExpansion, aliasSlack>>10)
	}
	return nil
}

func (c *converter) value(v any) (any, error) {
	switch v := v.(type) {
	case yaml.MapSlice:
		if err := c.spend(2); err != nil {
			return nil, err
		}
		m := make(map[string]any, len(v))
		for _, item := range v {
			k, err := c.key(item.Key)
			if err != nil {
				return nil, err
			}
			e, err := c.entry(m, k, item.Value)
			if err != nil {
				return nil, err
			}
			m[k] = e
		}
		return m, nil
	case map[any]any:
		if err := c.spend(2); err != nil {
			return nil, err
		}
		// go-yaml's map has no order: keys that become the same JSON key
		// (1 and "1") are taken in a fixed order, a string last.
		type kv struct {
			json string
			str  bool
			v    any
		}
		items := make([]kv, 0, len(v))
		for k, e := range v {
			s, err := c.key(k)
			if err != nil {
				return nil, err
			}
			_, str := k.(string)
			items = append(items, kv{s, str, e})
		}
		sort.Slice(items, func(i, j int) bool {
			if items[i].json != items[j].json {
				return items[i].json < items[j].json
			}
			return !items[i].str && items[j].str
		})
		m := make(map[string]any, len(v))
		for _, it := range items {
			e, err := c.entry(m, it.json, it.v)
			if err != nil {
				return nil, err
			}
			m[it.json] = e
		}
		return m, nil
	case []any:
		if err := c.spend(2); err != nil {
			return nil, err
		}
		out := make([]any, len(v))
		for i, e := range v {
			c.path = append(c.path, "["+strconv.Itoa(i)+"]")
			x, err := c.value(e)
			if err != nil {
				return nil, err
			}
			c.path = c.path[:len(c.path)-1]
			out[i] = x
		}
		return out, nil
	case string:
		return v, c.spend(len(v) + 3)
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, c.errorf("%v is not a JSON number", v)
		}
	}
	return v, c.spend(24)
}

// entry converts a mapping's value, noting a duplicate key.
func (c *converter) entry(m map[string]any, k string, v any) (any, error) {
	c.path = append(c.path, k)
	defer func() { c.path = c.path[:len(c.path)-1] }()
	if _, dup := m[k]; dup {
		c.dups = append(c.dups, yamlDup{path: c.pathString()})
	}
	if err := c.spend(len(k) + 4); err != nil {
		return nil, err
	}
	return c.value(v)
}

// key is the JSON key of a YAML key, as sigs.k8s.io/yaml writes it.
func (c *converter) key(k any) (string, error) {
	switch k := k.(type) {
	case string:
		return k, nil
	case int:
		return strconv.Itoa(k), nil
	case int64:
		return strconv.FormatInt(k, 10), nil
	case float64:
		s := strconv.FormatFloat(k, 'g', -1, 32)
		switch s {
		case "+Inf":
			s = ".inf"
		case "-Inf":
			s = "-.inf"
		case "NaN":
			s = ".nan"
		}
		return s, nil
	case bool:
		return strconv.FormatBool(k), nil
	case nil:
		return "", c.errorf("a null key")
	case uint64:
		return "", c.errorf("key %d is out of range (a 64-bit int)", k)
	}
	return "", c.errorf("a list or a mapping used as a key")
}
