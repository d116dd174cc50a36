package loader

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	k8sjson "sigs.k8s.io/json"
)

// This file is the loader's fast path, for the common big input: one
// file holding one kubectl List. It does not parse: it splits the list's
// items apart and hands each to the libraries the general reader uses,
// on every core, while it splits on. It gives up on anything unusual and
// on anything wrong, having changed nothing: readFile then reads the file
// the general way, which finds the same objects and notes, and says what
// is wrong.
//
//   - JSON: encoding/json's Decoder walks the top-level object's tokens
//     to "items" and decodes each item as a json.RawMessage.
//   - YAML, as kubectl writes it: the items are the lines from each "- "
//     at the start of a line to the next, below a top-level "items:"
//     line; each is read as a one-item sequence by go-yaml, converted as
//     the general reader converts a document (readYAMLItem), and the rest
//     of the document, "items: []" in the block's place, as a document.
//
// What it gives up on includes every error and, under Options.Strict,
// every unknown field; a duplicate field; several documents (any line
// starting with "---", "..." or "%"), comments at the start of a line,
// merge keys ("<<"), CR, NEL and Unicode line separators; a top level
// whose lines are not plain "key:" lines; anchors shared between items
// and the rest; items that are not mappings; a JSON array or stream of
// values.

// maxItemBrackets bounds the brackets of an item's JSON taken on the fast
// path: an item alone is two levels less deep than in its document, whose
// depth the decoders bound (10000 levels).
const maxItemBrackets = 9000

// readFast reads a file as readFile would, or reports false having
// changed nothing.
func (r *reader) readFast(file string, data []byte) bool {
	taken, err := r.readFastOrRefuse(file, data)
	return taken && err == nil
}

// readFastOrRefuse is readFast, which refuses the file itself when its
// objects take more than Options.MaxDecodedBytes: reading it again the
// general way would take as much again.
func (r *reader) readFastOrRefuse(file string, data []byte) (bool, error) {
	data = normalizeText(data)
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 || trimmed[0] == '[' {
		return false, nil
	}
	st := newItemStream(file, trimmed[0] != '{', r.opts.maxDecoded()-r.decoded)
	var skel []byte
	var ok bool
	if trimmed[0] == '{' {
		skel, ok = splitJSONList(trimmed, st.add)
	} else {
		skel, ok = st.splitYAML(data)
	}
	results := st.wait()
	if !ok || st.broken.Load() || !st.streamed {
		return false, nil
	}
	if st.yaml {
		// The rest of the document, read as the general reader reads a
		// document; with the items, within the document's alias budget.
		doc, err := readYAMLDocument(skel, 1)
		if err != nil || len(doc.dups) > 0 || doc.json == nil {
			return false, nil
		}
		if doc.spent+st.spent.Load() > aliasExpansion*int64(len(data))+aliasSlack {
			return false, nil
		}
		skel = doc.json
	}
	s := reader{opts: r.opts, decoded: r.decoded}
	if ok, err := s.fastDocument(file, skel, results); !ok {
		return false, err
	}
	r.decoded = s.decoded
	r.warnings = append(r.warnings, s.warnings...)
	r.objects = append(r.objects, s.objects...)
	r.skipped = append(r.skipped, s.skipped...)
	r.ignored = append(r.ignored, s.ignored...)
	for _, f := range s.inferred {
		if !containsString(r.inferred, f) {
			r.inferred = append(r.inferred, f)
		}
	}
	return true, nil
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// fastDocument is readDocument on a document whose items were split out
// (where is the file): skel is the document with "items":[] in their
// place, and items what decoding them found. Its error is the refusal of
// the item that takes the objects over Options.MaxDecodedBytes, which
// the general reader would give too.
func (r *reader) fastDocument(file string, skel []byte, items []streamedItem) (bool, error) {
	where := file
	var fields map[string]json.RawMessage
	if k8sjson.UnmarshalCaseSensitivePreserveInts(skel, &fields) != nil {
		return false, nil
	}
	// The items taken out must be the document's "items", and it must
	// hold no other.
	if v, ok := fields["items"]; !ok || string(bytes.TrimSpace(v)) != "[]" {
		return false, nil
	}
	var tm typeMeta
	if k8sjson.UnmarshalCaseSensitivePreserveInts(skel, &tm) != nil || !strings.HasSuffix(tm.Kind, "List") {
		return false, nil
	}
	var list listEnvelope
	strictErrs, err := decodeStrict(skel, &list)
	if err != nil || len(list.Items) != 0 {
		return false, nil
	}
	for _, e := range strictErrs {
		if r.strictf("%s: %s: %s", where, describe(tm.Kind, "", ""), e) != nil {
			return false, nil
		}
	}
	itemKind := strings.TrimSuffix(tm.Kind, "List")
	for j, it := range items {
		if !it.done {
			return false, nil // not decoded: the budget was spent before it
		}
		d := it.d
		if it.deferred != nil {
			d = decodeObject(fmt.Sprintf("%s: item %d", where, j), it.deferred, tm.APIVersion, itemKind, nil)
		}
		if err := r.apply(file, d); err != nil {
			var over *decodedTooLargeError
			if errors.As(err, &over) {
				return false, err
			}
			return false, nil
		}
	}
	return true, nil
}

// streamedItem is an item decoded, or kept to be decoded when the list's
// kind is known (an item without a kind takes its list's).
type streamedItem struct {
	d        decoded
	deferred []byte
	done     bool // decoded, or deferred
}

// itemStream decodes the items of a list on every core, as they come.
type itemStream struct {
	file     string
	yaml     bool // items are YAML text, converted by the workers
	streamed bool
	failed   atomic.Bool  // broken, or the budget spent: decode no more
	broken   atomic.Bool  // an item the fast path does not take
	spent    atomic.Int64 // the YAML items' conversion budget spent
	budget   int64        // what the items may take decoded (Options.MaxDecodedBytes less what was read)
	decoded  atomic.Int64 // what the items decoded so far take
	text     []byte       // the YAML document the items are in
	batch    *itemBatch
	batches  []*itemBatch
	work     chan *itemBatch
	wg       sync.WaitGroup
}

type itemBatch struct {
	st         *itemStream
	first      int
	raws       [][]byte
	bytes      int // the items' text
	start, end int // of the YAML items' text in st.text
	out        []streamedItem
}

const itemBatchSize = 32

// itemBatchBytes ends a batch before itemBatchSize items: a batch started
// is decoded whole, and 256 KiB of text may take 8 MiB decoded (empty
// tolerations), which the decoded-size budget may be passed by.
const itemBatchBytes = 256 << 10

func newItemStream(file string, yamlItems bool, budget int64) *itemStream {
	st := &itemStream{file: file, yaml: yamlItems, budget: budget, work: make(chan *itemBatch, 2*runtime.GOMAXPROCS(0))}
	for range runtime.GOMAXPROCS(0) {
		st.wg.Add(1)
		go func() {
			defer st.wg.Done()
			for b := range st.work {
				b.decode()
			}
		}()
	}
	return st
}

// add takes item i of the list.
func (st *itemStream) add(i int, raw []byte) {
	st.streamed = true
	if st.batch == nil {
		st.batch = &itemBatch{st: st, first: i}
	}
	st.batch.raws = append(st.batch.raws, raw)
	st.batch.bytes += len(raw)
	if len(st.batch.raws) == itemBatchSize || st.batch.bytes >= itemBatchBytes {
		st.flush()
	}
}

// addYAML takes item i of the list, the YAML text[start:end], which
// follows the batch's items.
func (st *itemStream) addYAML(i, start, end int) {
	if st.batch == nil {
		st.batch = &itemBatch{st: st, first: i, start: start}
	}
	st.batch.end = end
	st.add(i, st.text[start:end])
}

// flush sends the batch to the workers; once the items decoded take more
// than the budget, or one is broken, it keeps it undecoded.
func (st *itemStream) flush() {
	if st.batch != nil {
		st.batches = append(st.batches, st.batch)
		if !st.failed.Load() {
			st.work <- st.batch
		}
		st.batch = nil
	}
}

// wait returns every item decoded, in order.
func (st *itemStream) wait() []streamedItem {
	st.flush()
	close(st.work)
	st.wg.Wait()
	var out []streamedItem
	for _, b := range st.batches {
		if b.out == nil {
			// Never decoded (the budget was spent): not done.
			b.out = make([]streamedItem, len(b.raws))
		}
		out = append(out, b.out...)
	}
	return out
}

// decode decodes a batch's items; an item without a kind waits for its
// list's. A batch of YAML items is read as one block sequence (its items'
// lines, one after the other in the file): one go-yaml parser for them
// all.
//
// Every batch sent is decoded whole (but after a broken one), and none is
// sent once the items decoded take more than the budget: the batches
// decoded are the first ones, and hold the item that takes the objects
// over it. (A worker skipping a batch sent could leave one undecoded
// before it.)
func (b *itemBatch) decode() {
	if b.st.broken.Load() {
		return
	}
	b.out = make([]streamedItem, len(b.raws))
	defer func() {
		if b.st.decoded.Load() > b.st.budget {
			b.st.failed.Store(true)
		}
	}()
	if !b.st.yaml {
		for k, raw := range b.raws {
			if !b.decodeItem(k, raw, nil, false) {
				b.st.broken.Store(true)
				b.st.failed.Store(true)
				return
			}
		}
		return
	}
	text := b.st.text[b.start:b.end]
	if nodeStart(text, '&') && nodeStart(text, '*') {
		// Maybe an anchor and its aliases: go-yaml bounds their ratio to
		// all nodes over the whole document.
		b.st.broken.Store(true)
		b.st.failed.Store(true)
		return
	}
	spent, ok := readYAMLItems(text, len(b.raws), func(k int, raw []byte, tm *typeMeta) bool {
		return b.decodeItem(k, raw, tm, true)
	})
	if !ok {
		b.st.broken.Store(true)
		b.st.failed.Store(true)
		return
	}
	b.st.spent.Add(spent)
}

// decodeItem decodes item k of the batch, its JSON raw (lent when lent:
// kept only as a copy); tm is its type and name when known.
func (b *itemBatch) decodeItem(k int, raw []byte, tm *typeMeta, lent bool) bool {
	if bytes.Count(raw, []byte("{"))+bytes.Count(raw, []byte("[")) > maxItemBrackets {
		return false
	}
	if tm == nil {
		tm = new(typeMeta)
		if k8sjson.UnmarshalCaseSensitivePreserveInts(raw, tm) != nil {
			return false
		}
	}
	if tm.Kind == "" {
		if lent {
			raw = bytes.Clone(raw)
		}
		b.out[k].deferred = raw
		b.out[k].done = true
		return true
	}
	b.out[k].d = decodeObject(fmt.Sprintf("%s: item %d", b.st.file, b.first+k), raw, "", "", tm)
	b.out[k].done = true
	b.st.decoded.Add(b.out[k].d.size)
	return true
}

// nodeStart reports c where a YAML node may start (after a blank, a line
// break or a flow indicator), as an anchor's & and an alias's * do: not
// the & of "a&b". A false report (" & " in a script) only sends the file
// to the general reader.
func nodeStart(text []byte, c byte) bool {
	for i := bytes.IndexByte(text, c); i >= 0; {
		if i == 0 || bytes.IndexByte([]byte(" \t\n-[{,:?"), text[i-1]) >= 0 {
			return true
		}
		j := bytes.IndexByte(text[i+1:], c)
		if j < 0 {
			return false
		}
		i += 1 + j
	}
	return false
}

// splitJSONList passes the items of a JSON object's "items" array to
// items, and returns the object with "items":[] in their place; or
// reports false (not one object, a key twice, "items" not an array, ...).
// encoding/json's Decoder checks the syntax; the items and the rest are
// checked when decoded.
func splitJSONList(data []byte, items func(i int, raw []byte)) ([]byte, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	skel := []byte{'{'}
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		key, ok := t.(string)
		if err != nil || !ok || seen[key] {
			return nil, false
		}
		seen[key] = true
		if len(skel) > 1 {
			skel = append(skel, ',')
		}
		k, err := json.Marshal(key)
		if err != nil {
			return nil, false
		}
		skel = append(append(skel, k...), ':')
		// A value's bytes are data's, from where the decoder was to where
		// it is (past the separator before it and blanks): the decoder
		// checks them and copies nothing.
		value := func() ([]byte, bool) {
			start := dec.InputOffset()
			if dec.Decode(&skipJSON{}) != nil {
				return nil, false
			}
			return bytes.TrimLeft(data[start:dec.InputOffset()], " \t\r\n,:"), true
		}
		if key != "items" {
			v, ok := value()
			if !ok {
				return nil, false
			}
			skel = append(skel, v...)
			continue
		}
		if t, err := dec.Token(); err != nil || t != json.Delim('[') {
			return nil, false
		}
		for n := 0; dec.More(); n++ {
			item, ok := value()
			if !ok {
				return nil, false
			}
			items(n, item)
		}
		if t, err := dec.Token(); err != nil || t != json.Delim(']') {
			return nil, false
		}
		skel = append(skel, "[]"...)
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false
	}
	return append(skel, '}'), true
}

// skipJSON is a JSON value decoded into nothing.
type skipJSON struct{}

func (*skipJSON) UnmarshalJSON([]byte) error { return nil }

// splitYAML passes the items of a YAML document's top-level "items" block
// sequence, as kubectl writes it (each "- " at the start of a line), to
// the workers, and returns the document with "items: []" in their place;
// or reports false. It reads lines, never YAML: what it cannot tell from
// the first character of a line it gives up on, and a line it took for
// the start of an item that was not leaves an item or the rest that
// go-yaml refuses.
func (st *itemStream) splitYAML(data []byte) ([]byte, bool) {
	st.text = data
	if bytes.Contains(data, []byte("<<")) || bytes.ContainsAny(data, "\r\u0085\u2028\u2029") {
		return nil, false
	}
	var skel []byte
	inItems, seenItems := false, false
	itemStart, n := -1, 0
	for pos := 0; pos < len(data); {
		end := bytes.IndexByte(data[pos:], '\n') + 1
		if end == 0 {
			end = len(data)
		} else {
			end += pos
		}
		line := data[pos:end]
		if inItems {
			switch {
			case line[0] == '-' && (len(line) == 1 || line[1] == ' ' || line[1] == '\n'):
				if itemStart >= 0 {
					st.addYAML(n, itemStart, pos)
					n++
				}
				itemStart = pos
				pos = end
				continue
			case line[0] == ' ' || line[0] == '\n':
				if itemStart < 0 {
					return nil, false // an indented sequence, or none
				}
				pos = end
				continue
			}
			if itemStart < 0 {
				return nil, false
			}
			st.addYAML(n, itemStart, pos)
			n++
			inItems = false
			skel = append(skel, "items: []\n"...)
			skel = append(skel, line...) // the rest follows
			pos = end
			if !plainKeyLine(line) {
				return nil, false
			}
			continue
		}
		switch {
		case line[0] == ' ' || line[0] == '\n':
		case plainKeyLine(line):
			if bytes.HasPrefix(line, []byte("items:")) {
				if seenItems || string(bytes.TrimRight(line, " \n")) != "items:" {
					return nil, false
				}
				seenItems, inItems = true, true
				pos = end
				continue
			}
		default:
			return nil, false
		}
		skel = append(skel, line...)
		pos = end
	}
	if inItems {
		if itemStart < 0 {
			return nil, false
		}
		st.addYAML(n, itemStart, len(data))
		skel = append(skel, "items: []\n"...)
	}
	if !seenItems {
		return nil, false
	}
	return skel, true
}

// plainKeyLine reports a line starting with a plain key and a colon
// ("apiVersion: v1", "metadata:"), the only lines the fast path takes at
// the top level.
func plainKeyLine(line []byte) bool {
	for i, c := range line {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9' && i > 0, c == '_' && i > 0:
		case c == ':' && i > 0:
			return i+1 == len(line) || line[i+1] == ' ' || line[i+1] == '\n'
		default:
			return false
		}
	}
	return false
}
