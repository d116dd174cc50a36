package scenario

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"unicode/utf8"

	k8sjson "sigs.k8s.io/json"
)

// This file is the loader's fast path, for the common big input: one
// file holding one kubectl List (or one object), in the YAML kubectl
// writes (fastyaml.go) or in JSON. It reads the list's items one by one,
// decoding them on every core while it reads on, never holding the whole
// document's YAML tree nor its JSON: an item's JSON is dropped once
// decoded. It gives up on anything else, and on anything wrong, having
// changed nothing: readFile then reads the file the general way, which
// finds the same objects and notes, and says what is wrong.
//
// What it gives up on includes every error and, under Options.Strict,
// every unknown field; a duplicate field in YAML; several documents;
// comments, anchors, tags, flow collections, folded scalars in YAML (see
// fastYAMLOK); a JSON array or stream of values; escaped keys in JSON.

// readFast reads a file as readFile would, or reports false having
// changed nothing.
func (r *reader) readFast(file string, data []byte) bool {
	data = normalizeText(data)
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return false
	}
	st := newItemStream(file)
	var skel []byte
	var ok bool
	switch trimmed[0] {
	case '[':
		return false
	case '{':
		skel, ok = splitJSONList(trimmed, st.add)
	default:
		st.sorted = true
		skel, ok = fastYAML(data, st.add)
	}
	results := st.wait()
	if !ok {
		return false
	}
	s := reader{opts: r.opts}
	if !s.fastDocument(file, skel, st.streamed, results) {
		return false
	}
	r.warnings = append(r.warnings, s.warnings...)
	r.objects = append(r.objects, s.objects...)
	r.skipped = append(r.skipped, s.skipped...)
	for _, f := range s.inferred {
		if !containsString(r.inferred, f) {
			r.inferred = append(r.inferred, f)
		}
	}
	return true
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// fastDocument is readDocument on a document read whole (where is the
// file): skel is the document, or with streamed its "items" emptied and
// items what decoding its items found.
func (r *reader) fastDocument(file string, skel []byte, streamed bool, items []streamedItem) bool {
	where := file
	var fields map[string]json.RawMessage
	if k8sjson.UnmarshalCaseSensitivePreserveInts(skel, &fields) != nil {
		return false
	}
	var tm typeMeta
	if k8sjson.UnmarshalCaseSensitivePreserveInts(skel, &tm) != nil {
		return false
	}
	if tm.Kind == "" {
		if _, internal := fields["Items"]; internal {
			return false
		}
	}
	if !strings.HasSuffix(tm.Kind, "List") {
		return !streamed && r.readObject(file, where, skel, "", "") == nil
	}
	var list listEnvelope
	strictErrs, err := decodeStrict(skel, &list)
	if err != nil {
		return false
	}
	for _, e := range strictErrs {
		if r.strictf("%s: %s: %s", where, describe(tm.Kind, "", ""), e) != nil {
			return false
		}
	}
	itemKind := strings.TrimSuffix(tm.Kind, "List")
	if !streamed {
		for j, item := range list.Items {
			if r.readObject(file, fmt.Sprintf("%s: item %d", where, j), item, tm.APIVersion, itemKind) != nil {
				return false
			}
		}
		return true
	}
	if len(list.Items) != 0 {
		return false
	}
	for j, it := range items {
		d := it.d
		if it.deferred != nil {
			d = decodeObject(fmt.Sprintf("%s: item %d", where, j), it.deferred, tm.APIVersion, itemKind, nil)
		}
		if r.apply(file, d) != nil {
			return false
		}
	}
	return true
}

// streamedItem is an item decoded, or kept to be decoded when the list's
// kind is known (an item without a kind takes its list's).
type streamedItem struct {
	d        decoded
	deferred []byte
}

// itemStream decodes the items of a list on every core, as they come.
type itemStream struct {
	file     string
	sorted   bool // items' keys in order, each once (fastYAML's)
	streamed bool
	batch    *itemBatch
	batches  []*itemBatch
	work     chan *itemBatch
	wg       sync.WaitGroup
}

type itemBatch struct {
	st    *itemStream
	first int
	raws  [][]byte
	out   []streamedItem
}

const itemBatchSize = 32

func newItemStream(file string) *itemStream {
	st := &itemStream{file: file, work: make(chan *itemBatch, 2*runtime.GOMAXPROCS(0))}
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

// add takes item i of the list, its JSON.
func (st *itemStream) add(i int, raw []byte) {
	st.streamed = true
	if st.batch == nil {
		st.batch = &itemBatch{st: st, first: i}
	}
	st.batch.raws = append(st.batch.raws, raw)
	if len(st.batch.raws) == itemBatchSize {
		st.flush()
	}
}

func (st *itemStream) flush() {
	if st.batch != nil {
		st.batches = append(st.batches, st.batch)
		st.work <- st.batch
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
		out = append(out, b.out...)
	}
	return out
}

// decode decodes a batch's items; an item without a kind waits for its
// list's.
func (b *itemBatch) decode() {
	b.out = make([]streamedItem, len(b.raws))
	for k, raw := range b.raws {
		tm, ok := quickTypeMeta(raw, b.st.sorted)
		if !ok || tm.Kind == "" {
			b.out[k].deferred = raw
			continue
		}
		b.out[k].d = decodeObject(fmt.Sprintf("%s: item %d", b.st.file, b.first+k), raw, "", "", &tm)
	}
	b.raws = nil
}

// splitJSONList passes the items of a JSON object's "items" array to
// items, and returns the object with "items":[] in their place; or
// reports false (not one object, a key with an escape or twice the same,
// ...). The items and the rest are checked when decoded.
func splitJSONList(data []byte, items func(i int, raw []byte)) ([]byte, bool) {
	i := 0
	ws := func() {
		for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
			i++
		}
	}
	// sep reads what follows a value: a comma (more follows), the closer
	// (the collection ends) or anything else (not read here).
	sep := func(closer byte) (more, ok bool) {
		ws()
		if i < len(data) && (data[i] == ',' || data[i] == closer) {
			i++
			return data[i-1] == ',', true
		}
		return false, false
	}
	if data[0] != '{' {
		return nil, false
	}
	i = 1
	var skel []byte
	last := 0 // data[last:i] is still to be copied to skel
	seen := map[string]bool{}
	ws()
	if i < len(data) && data[i] == '}' {
		i++
	} else {
		for {
			ws()
			if i >= len(data) || data[i] != '"' {
				return nil, false
			}
			end := skipJSONString(data, i)
			if end < 0 {
				return nil, false
			}
			key := data[i+1 : end-1]
			if bytes.IndexByte(key, '\\') >= 0 || seen[string(key)] {
				return nil, false
			}
			seen[string(key)] = true
			i = end
			ws()
			if i >= len(data) || data[i] != ':' {
				return nil, false
			}
			i++
			ws()
			if string(key) == "items" && i < len(data) && data[i] == '[' {
				skel = append(skel, data[last:i]...)
				skel = append(skel, "[]"...)
				i++
				n := 0
				ws()
				if i < len(data) && data[i] == ']' {
					i++
				} else {
					for {
						ws()
						end := skipJSONValue(data, i)
						if end < 0 {
							return nil, false
						}
						items(n, data[i:end])
						n++
						i = end
						more, ok := sep(']')
						if !ok {
							return nil, false
						}
						if !more {
							break
						}
					}
				}
				last = i
			} else {
				end := skipJSONValue(data, i)
				if end < 0 {
					return nil, false
				}
				i = end
			}
			more, ok := sep('}')
			if !ok {
				return nil, false
			}
			if !more {
				break
			}
		}
	}
	if i != len(data) {
		return nil, false
	}
	return append(skel, data[last:]...), true
}

// skipJSONString returns the end of the string starting at data[i], or
// -1.
func skipJSONString(data []byte, i int) int {
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// skipJSONValue returns the end of the value starting at data[i], or -1:
// it only matches brackets and quotes, the value is checked when
// decoded.
func skipJSONValue(data []byte, i int) int {
	if i >= len(data) {
		return -1
	}
	switch data[i] {
	case '"':
		return skipJSONString(data, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '"':
				end := skipJSONString(data, j)
				if end < 0 {
					return -1
				}
				j = end - 1
			case '{', '[':
				depth++
				if depth > 1000 {
					return -1 // the whole document's depth is bounded too
				}
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(data) && !strings.ContainsRune(" \t\n\r,]}", rune(data[j])) {
		j++
	}
	if j == i {
		return -1
	}
	return j
}

// quickTypeMeta finds an object's apiVersion, kind, name and namespace
// without decoding it, when each is a string without escapes given once
// (and metadata an object); otherwise it reports false. Whether raw is
// JSON at all is left to the decoding of the object. sorted says raw's
// keys are in order and unique at every level (fastYAML writes them so),
// which lets it stop past the keys it looks for.
func quickTypeMeta(raw []byte, sorted bool) (typeMeta, bool) {
	var tm typeMeta
	ok := scanJSONObject(raw, func(key []byte, value []byte) (bool, bool) {
		switch string(key) {
		case "apiVersion":
			return jsonPlainString(value, &tm.APIVersion), false
		case "kind":
			return jsonPlainString(value, &tm.Kind), false
		case "metadata":
			ok := scanJSONObject(value, func(key, value []byte) (bool, bool) {
				switch string(key) {
				case "name":
					return jsonPlainString(value, &tm.Metadata.Name), false
				case "namespace":
					return jsonPlainString(value, &tm.Metadata.Namespace), false
				}
				return true, sorted && string(key) > "namespace"
			})
			return ok, sorted
		}
		return true, sorted && string(key) > "metadata"
	})
	return tm, ok
}

// jsonPlainString sets *s to a JSON string without escapes, or reports
// false; it must be set once.
func jsonPlainString(v []byte, s *string) bool {
	if *s != "" || len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' || bytes.IndexByte(v[1:len(v)-1], '\\') >= 0 || bytes.IndexByte(v[1:len(v)-1], '"') >= 0 || !utf8.Valid(v) {
		return false
	}
	*s = string(v[1 : len(v)-1])
	return *s != ""
}

// scanJSONObject calls f on each key (without escapes, each once) and
// value of the JSON object data, until f says to stop, or reports false
// (or f does).
func scanJSONObject(data []byte, f func(key, value []byte) (ok, stop bool)) bool {
	i := 0
	ws := func() {
		for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
			i++
		}
	}
	ws()
	if i >= len(data) || data[i] != '{' {
		return false
	}
	i++
	ws()
	if i < len(data) && data[i] == '}' {
		i++
		ws()
		return i == len(data)
	}
	seen := make([][]byte, 0, 64)
	for {
		ws()
		if i >= len(data) || data[i] != '"' {
			return false
		}
		end := skipJSONString(data, i)
		if end < 0 {
			return false
		}
		key := data[i+1 : end-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			return false
		}
		if len(seen) == 64 {
			return false // few objects have more keys: the general way
		}
		for _, k := range seen {
			if bytes.Equal(k, key) {
				return false
			}
		}
		seen = append(seen, key)
		i = end
		ws()
		if i >= len(data) || data[i] != ':' {
			return false
		}
		i++
		ws()
		end = skipJSONValue(data, i)
		if end < 0 {
			return false
		}
		if ok, stop := f(key, data[i:end]); !ok || stop {
			return ok
		}
		i = end
		ws()
		if i < len(data) && data[i] == ',' {
			i++
			continue
		}
		if i < len(data) && data[i] == '}' {
			i++
			ws()
			return i == len(data)
		}
		return false
	}
}
