package scenario

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
	"unsafe"
)

// This file converts the YAML kubectl writes (go-yaml v2's block style:
// block mappings and sequences, plain, quoted and literal scalars, empty
// flow collections) to the JSON readYAMLDocument makes of it, byte for
// byte, an order of magnitude faster and without go-yaml's node tree. It
// gives up (slowYAML) on anything else: comments, anchors and aliases,
// tags, merge keys, flow collections that are not empty, folded scalars,
// several documents, duplicate keys, floats, tabs, CR line breaks, and
// whatever it does not recognise; the loader then reads the file with
// go-yaml, which says what is wrong with it, if anything.

// slowYAML is the panic value with which fastYAML gives up.
type slowYAML struct{}

// fastYAMLOK reports whether data is text fastYAML may read: UTF-8
// characters YAML allows, no tab, no CR nor NEL, no Unicode line
// separator, no byte order mark, no merge key, no directive, document
// marker nor comment line, ending with a line break.
func fastYAMLOK(data []byte) bool {
	if len(data) == 0 || data[len(data)-1] != '\n' || bytes.Contains(data, []byte("<<")) {
		return false
	}
	lineStart := true
	for i := 0; i < len(data); {
		c := data[i]
		if lineStart {
			lineStart = false
			// A directive, a document marker. (A comment line is refused
			// where a line is read as structure, by peek: inside a block
			// or quoted scalar, "# ..." is content, as in a script.)
			if c == '%' || ((c == '-' || c == '.') && i+2 < len(data) && data[i+1] == c && data[i+2] == c) {
				return false
			}
		}
		if c < utf8.RuneSelf {
			if c == '\n' {
				lineStart = true
			} else if c < 0x20 || c == 0x7F {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(data[i:])
		switch {
		case r == utf8.RuneError && n == 1,
			r < 0xA0, // C1 controls, NEL
			r == 0x2028 || r == 0x2029,
			r >= 0xD800 && r < 0xE000,
			r == 0xFEFF, r == 0xFFFE, r == 0xFFFF:
			return false
		}
		i += n
	}
	return true
}

// yamlFast converts one YAML document (data, which fastYAMLOK accepts)
// to JSON. With items set, a top-level "items" block sequence is not
// written: each of its items is passed to items, as JSON, and the
// document holds "items":[] in its place.
type yamlFast struct {
	data   []byte
	pos    int // start of the next line to read
	out    []byte
	budget int64
	// entries is a stack of the keys of the mappings being written.
	entries []fastEntry
	items   func(i int, raw []byte)
	depth   int
	// The line at dashLine is read from column dashCol: a mapping's
	// first key after a sequence's dash.
	dashLine, dashCol int
	// endOf is the end of the line at endPos (a cache).
	endPos, endOf int
	copies        int64 // what sortEntries may copy yet
}

// lineEnd is the index of the line break ending the line at p.pos.
func (p *yamlFast) lineEnd() int {
	if p.endPos != p.pos {
		p.endPos, p.endOf = p.pos, p.pos+bytes.IndexByte(p.data[p.pos:], '\n')
	}
	return p.endOf
}

type fastEntry struct {
	key        string
	start, end int // "key":value in out
}

// fastYAML converts data, or reports false. A panic other than slowYAML
// is a bug, and is not recovered.
func fastYAML(data []byte, items func(i int, raw []byte)) (out []byte, ok bool) {
	if !fastYAMLOK(data) {
		return nil, false
	}
	limit := aliasExpansion*int64(len(data)) + aliasSlack
	p := &yamlFast{data: data, budget: limit, items: items, dashLine: -1, endPos: -1, copies: 4*int64(len(data)) + 1<<20}
	defer func() {
		if e := recover(); e != nil {
			if _, slow := e.(slowYAML); !slow {
				panic(e)
			}
			out, ok = nil, false
		}
	}()
	indent, content, ok := p.peek()
	if !ok || content[0] == '-' {
		return nil, false // empty, or not a mapping
	}
	p.mapping(indent, true)
	if _, _, more := p.peek(); more {
		p.slow()
	}
	return p.out, true
}

func (p *yamlFast) slow() { panic(slowYAML{}) }

func (p *yamlFast) spend(n int) {
	p.budget -= int64(n)
	if p.budget < 0 {
		p.slow()
	}
}

// peek finds the next line that is not blank: its indentation and
// content (without the line break), leaving p.pos at its start.
func (p *yamlFast) peek() (indent int, content []byte, ok bool) {
	for p.pos < len(p.data) {
		end := p.lineEnd()
		line := p.data[p.pos:end]
		i := 0
		for i < len(line) && line[i] == ' ' {
			i++
		}
		if i < len(line) {
			if line[i] == '#' {
				p.slow() // a comment line
			}
			if p.pos == p.dashLine {
				i = p.dashCol
			}
			return i, line[i:], true
		}
		p.pos = end + 1
	}
	return 0, nil, false
}

// next moves past the line peek found.
func (p *yamlFast) next() {
	p.pos = p.lineEnd() + 1
}

// mapping writes the block mapping whose keys are at column indent,
// starting on the current line (at column indent).
func (p *yamlFast) mapping(indent int, top bool) {
	p.depth++
	if p.depth > 1000 {
		p.slow()
	}
	p.spend(2)
	p.out = append(p.out, '{')
	base := len(p.entries)
	sorted := true
	for {
		in, content, ok := p.peek()
		if !ok || in < indent {
			break
		}
		if in > indent {
			p.slow()
		}
		key, rest := p.key(content)
		start := len(p.out)
		if len(p.entries) > base {
			p.out = append(p.out, ',')
			start++
			if prev := p.entries[len(p.entries)-1].key; key <= prev {
				sorted = false
			}
		}
		p.out = appendJSONString(p.out, key)
		p.out = append(p.out, ':')
		p.spend(len(key) + 4)
		if top && key == "items" && p.items != nil {
			if p.itemsSequence(indent, rest) {
				p.out = append(p.out, "[]"...)
				p.entries = append(p.entries, fastEntry{key, start, len(p.out)})
				continue
			}
		}
		p.value(indent, indent, rest, true)
		p.entries = append(p.entries, fastEntry{key, start, len(p.out)})
	}
	if !sorted {
		p.sortEntries(base)
	}
	p.entries = p.entries[:base]
	p.out = append(p.out, '}')
	p.depth--
}

// sortEntries writes the mapping's entries from base in key order, as
// encoding/json writes a map; a duplicate key gives up.
func (p *yamlFast) sortEntries(base int) {
	es := append([]fastEntry(nil), p.entries[base:]...)
	first := es[0].start
	// A mapping out of order copies what it holds, mappings out of order
	// nested in it included: bound the copies (kubectl writes its keys
	// in order), to stay linear in the input.
	p.copies -= int64(len(p.out) - first)
	if p.copies < 0 {
		p.slow()
	}
	seg := append([]byte(nil), p.out[first:]...)
	slices.SortFunc(es, func(a, b fastEntry) int { return strings.Compare(a.key, b.key) })
	p.out = p.out[:first]
	for i, e := range es {
		if i > 0 {
			if e.key == es[i-1].key {
				p.slow()
			}
			p.out = append(p.out, ',')
		}
		s, t := e.start-first, e.end-first
		if seg[s] == ',' {
			s++
		}
		p.out = append(p.out, seg[s:t]...)
	}
}

// key reads a mapping key at the start of content: its JSON form, and
// what follows the ':'.
func (p *yamlFast) key(content []byte) (string, []byte) {
	// go-yaml's simple keys end within 1024 characters of their start.
	const maxKey = 1000
	switch content[0] {
	case '"', '\'':
		s, n := p.quotedLine(content)
		if n > maxKey {
			p.slow()
		}
		rest := content[n:]
		if len(rest) == 0 || rest[0] != ':' || (len(rest) > 1 && rest[1] != ' ') {
			p.slow()
		}
		return s, rest[1:]
	}
	if !plainStart(content) {
		p.slow()
	}
	i := bytes.Index(content, []byte(": "))
	if i < 0 {
		if content[len(content)-1] != ':' {
			p.slow()
		}
		i = len(content) - 1
	}
	if i > maxKey {
		p.slow()
	}
	k := content[:i]
	if k[len(k)-1] == ' ' || bytes.Contains(k, []byte(" #")) {
		p.slow()
	}
	return p.plainKey(k), content[i+1:]
}

// plainStart reports content that can start a plain scalar: not an
// indicator.
func plainStart(content []byte) bool {
	switch content[0] {
	case '-', '?', ':':
		// A plain scalar when followed by a character that is not blank
		// ("-1", "-Xmx", "--config=x"; fastYAMLOK has refused "---" at a
		// line's start, the one place it is a document marker); keep it
		// simple: '-' only.
		return content[0] == '-' && len(content) > 1 && content[1] != ' '
	case ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`':
		return false
	}
	return true
}

// plainKey is the JSON key of a plain YAML key, as go-yaml resolves it
// and converter.key writes it.
func (p *yamlFast) plainKey(k []byte) string {
	if !needsResolve(k) {
		return unsafeString(k)
	}
	switch v := resolvePlain(string(k)).(type) {
	case string:
		return v
	case int:
		return strconv.Itoa(v)
	case bool:
		return strconv.FormatBool(v)
	}
	p.slow() // null, uint64, float keys
	return ""
}

// value writes the value of a mapping entry or sequence item whose rest
// of line is rest; parent is the indentation of the collection holding
// it (go-yaml's parser.indent), col the column of its key or dash.
func (p *yamlFast) value(parent, col int, rest []byte, inMapping bool) {
	rest = bytes.TrimLeft(rest, " ")
	if len(rest) == 0 {
		p.next()
		in, content, ok := p.peek()
		switch {
		case ok && in > col:
			if content[0] == '-' && (len(content) == 1 || content[1] == ' ') {
				p.sequence(in)
			} else {
				p.mapping(in, false)
			}
		case ok && in == col && inMapping && content[0] == '-' && (len(content) == 1 || content[1] == ' '):
			p.sequence(in) // kubectl's: a sequence at its key's column
		default:
			p.spend(24)
			p.out = append(p.out, "null"...)
		}
		return
	}
	switch rest[0] {
	case '"', '\'':
		s := p.quoted(parent, rest)
		p.spend(len(s) + 3)
		p.out = appendJSONString(p.out, s)
		return
	case '|':
		p.literal(parent, rest)
		return
	case '{', '[':
		r := bytes.TrimRight(rest, " ")
		if len(r) != 2 || (r[0] == '{' && r[1] != '}') || (r[0] == '[' && r[1] != ']') {
			p.slow()
		}
		p.spend(2)
		p.out = append(p.out, r...)
		p.next()
		return
	}
	if !plainStart(rest) {
		p.slow()
	}
	p.plain(parent, rest)
}

// plainBad reports text a plain scalar cannot hold whole: ": ", " #",
// a ':' ending it.
func plainBad(t []byte) bool {
	return bytes.Contains(t, []byte(": ")) || bytes.Contains(t, []byte(" #")) || t[len(t)-1] == ':'
}

// plain writes a plain scalar starting with first on the current line,
// with its continuation lines (indented past parent).
func (p *yamlFast) plain(parent int, first []byte) {
	first = bytes.TrimRight(first, " ")
	if plainBad(first) {
		p.slow()
	}
	p.next()
	var s []byte
	multi := false
	for {
		save := p.pos
		blank := 0
		for p.pos < len(p.data) {
			end := p.pos + bytes.IndexByte(p.data[p.pos:], '\n')
			if len(bytes.TrimLeft(p.data[p.pos:end], " ")) > 0 {
				break
			}
			blank++
			p.pos = end + 1
		}
		in, content, ok := p.peek()
		if !ok || in <= parent {
			p.pos = save
			break
		}
		content = bytes.TrimRight(content, " ")
		if content[0] == '#' || content[0] == '-' || plainBad(content) {
			p.slow()
		}
		if !multi {
			s = append(s, first...)
			multi = true
		}
		if blank == 0 {
			s = append(s, ' ')
		}
		for range blank {
			s = append(s, '\n')
		}
		s = append(s, content...)
		p.next()
	}
	if multi {
		p.spend(len(s) + 3)
		p.out = appendJSONString(p.out, s)
		return
	}
	if !needsResolve(first) {
		p.spend(len(first) + 3)
		p.out = appendJSONString(p.out, first)
		return
	}
	switch v := resolvePlain(string(first)).(type) {
	case string:
		p.spend(len(v) + 3)
		p.out = appendJSONString(p.out, v)
	case int:
		p.spend(24)
		p.out = strconv.AppendInt(p.out, int64(v), 10)
	case uint64:
		p.spend(24)
		p.out = strconv.AppendUint(p.out, v, 10)
	case bool:
		p.spend(24)
		p.out = strconv.AppendBool(p.out, v)
	case nil:
		p.spend(24)
		p.out = append(p.out, "null"...)
	default:
		p.slow()
	}
}

// literal writes a literal block scalar ("|" or "|-", the indentation
// found) whose content is indented past parent.
func (p *yamlFast) literal(parent int, header []byte) {
	h := bytes.TrimRight(header, " ")
	strip := false
	// An indentation indicator ("|2", "|2-"), which go-yaml writes when
	// the first line starts with a space: the content is indented by it
	// past the holding collection (go-yaml's parser.indent + increment).
	increment := 0
	if len(h) >= 2 && h[1] >= '1' && h[1] <= '9' {
		increment = int(h[1] - '0')
		h = append([]byte{'|'}, h[2:]...)
	}
	switch string(h) {
	case "|":
	case "|-":
		strip = true
	default:
		p.slow()
	}
	p.next()
	if p.pos >= len(p.data) || p.data[p.pos] == '\n' {
		p.slow() // leading blank lines
	}
	indent := 0
	for p.data[p.pos+indent] == ' ' {
		indent++
	}
	if indent <= parent || p.data[p.pos+indent] == '\n' {
		p.slow()
	}
	if increment > 0 {
		want := increment
		if parent >= 0 {
			want += parent
		}
		if indent < want {
			p.slow()
		}
		indent = want
	}
	var s []byte
	breaks := 0
	for p.pos < len(p.data) {
		end := p.pos + bytes.IndexByte(p.data[p.pos:], '\n')
		line := p.data[p.pos:end]
		if len(line) == 0 {
			breaks++
			p.pos = end + 1
			continue
		}
		in := 0
		for in < len(line) && line[in] == ' ' {
			in++
		}
		if in == len(line) {
			p.slow() // a line of spaces
		}
		if in < indent {
			break
		}
		if len(s) > 0 {
			s = append(s, '\n')
		}
		for range breaks {
			s = append(s, '\n')
		}
		breaks = 0
		s = append(s, line[indent:]...)
		p.pos = end + 1
	}
	if !strip {
		s = append(s, '\n')
	}
	// The blank lines after the content are not the scalar's: let peek
	// skip them.
	p.spend(len(s) + 3)
	p.out = appendJSONString(p.out, s)
}

// quotedLine reads a quoted scalar that ends on its line: its value and
// its length in content.
func (p *yamlFast) quotedLine(content []byte) (string, int) {
	s, n, ok := scanQuoted(content, -1)
	if !ok {
		p.slow()
	}
	return s, n
}

// quoted reads a quoted scalar starting at rest, a suffix of the current
// line, maybe continued on the next lines (indented past parent), and
// moves past it; what follows it on its last line must be blank.
func (p *yamlFast) quoted(parent int, rest []byte) string {
	at := p.lineEnd() - len(rest)
	s, n, ok := scanQuoted(p.data[at:], parent)
	if !ok {
		p.slow()
	}
	end := at + n
	nl := bytes.IndexByte(p.data[end:], '\n')
	if len(bytes.TrimRight(p.data[end:end+nl], " ")) > 0 {
		p.slow()
	}
	p.pos = end + nl + 1
	return s
}

// itemsSequence writes nothing and passes each item of the block
// sequence that is the value of a top-level "items" (rest the rest of its
// line) to p.items, or reports false having read nothing.
func (p *yamlFast) itemsSequence(indent int, rest []byte) bool {
	if len(bytes.TrimLeft(rest, " ")) != 0 {
		return false
	}
	save := p.pos
	p.next()
	in, content, ok := p.peek()
	if !ok || in < indent || content[0] != '-' || (len(content) > 1 && content[1] != ' ') {
		p.pos = save
		return false
	}
	out := p.out
	n, lastLen := 0, 0
	p.spend(2)
	for {
		i, content, ok := p.peek()
		if !ok || i != in || content[0] != '-' || (len(content) > 1 && content[1] != ' ') {
			break
		}
		p.out = make([]byte, 0, lastLen+lastLen/4+64)
		p.item(in, content)
		lastLen = len(p.out)
		p.items(n, p.out)
		n++
	}
	p.out = out
	return true
}

// sequence writes the block sequence whose dashes are at column indent.
func (p *yamlFast) sequence(indent int) {
	p.depth++
	if p.depth > 1000 {
		p.slow()
	}
	p.spend(2)
	p.out = append(p.out, '[')
	first := true
	for {
		in, content, ok := p.peek()
		if !ok || in != indent || content[0] != '-' || (len(content) > 1 && content[1] != ' ') {
			if ok && in > indent {
				p.slow()
			}
			break
		}
		if !first {
			p.out = append(p.out, ',')
		}
		first = false
		p.item(in, content)
	}
	p.out = append(p.out, ']')
	p.depth--
}

// item writes the sequence item whose dash starts content, at column
// indent.
func (p *yamlFast) item(indent int, content []byte) {
	rest := content[1:]
	sp := 0
	for sp < len(rest) && rest[sp] == ' ' {
		sp++
	}
	if sp == len(rest) {
		p.value(indent, indent, nil, false)
		return
	}
	rest = rest[sp:]
	col := indent + 1 + sp
	if rest[0] == '-' && (len(rest) == 1 || rest[1] == ' ') {
		p.slow() // "- - a"
	}
	if isKeyLine(rest) {
		// "- key: value": a mapping at col, its first key on this line.
		// Its lines are read as if the dash were a space.
		p.dashLine, p.dashCol = p.pos, col
		p.mapping(col, false)
		return
	}
	p.value(indent, col, rest, false)
}

// isKeyLine reports a line that starts with a mapping key.
func isKeyLine(content []byte) bool {
	switch content[0] {
	case '"', '\'':
		_, n, ok := scanQuoted(content, -1)
		return ok && n < len(content) && content[n] == ':' && (n+1 == len(content) || content[n+1] == ' ')
	}
	if !plainStart(content) {
		return false
	}
	return bytes.Contains(content, []byte(": ")) || content[len(content)-1] == ':'
}

// jsonSafe are the ASCII characters encoding/json writes as themselves
// in a string, HTML characters escaped.
var jsonSafe = func() (t [utf8.RuneSelf]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		t[b] = b != '"' && b != '\\' && b != '<' && b != '>' && b != '&'
	}
	return t
}()

// appendJSONString appends s as encoding/json writes a string (HTML
// characters escaped).
func appendJSONString[S string | []byte](dst []byte, s S) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if jsonSafe[b] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// needsResolve reports a plain scalar go-yaml may resolve to something
// else than itself, a string: one starting with a character of its
// resolve table, but for the letters, only its words.
func needsResolve(b []byte) bool {
	switch c := b[0]; {
	case c == '+' || c == '-' || c == '.' || (c >= '0' && c <= '9'):
		return true
	case c == 'y' || c == 'Y' || c == 'n' || c == 'N' || c == 't' || c == 'T' || c == 'f' || c == 'F' || c == 'o' || c == 'O' || c == '~':
		// Only its words (true, null, ...) resolve.
		_, word := yamlWords[string(b)]
		return word
	}
	return false
}

// unsafeString is b as a string, without a copy: b is the input, which
// is not written while the fast path reads it.
func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// resolvePlain is go-yaml v2's resolve of a plain scalar (decoded into
// an interface, a timestamp stays a string), but floats, which it
// returns as float64 for the caller to give up on.
func resolvePlain(in string) any {
	if in == "" {
		return nil
	}
	switch c := in[0]; {
	case c == '+' || c == '-' || (c >= '0' && c <= '9'):
		if strings.IndexFunc(in, notNumeric) >= 0 {
			// No int, float nor timestamp holds this character: a
			// string, which go-yaml would find trying each.
			if _, ok := yamlWords[in]; !ok {
				return in
			}
		}
		if c >= '0' && c <= '9' {
			if isTimestamp(in) {
				return in // a timestamp: a string in an interface
			}
		} else if item, ok := yamlWords[in]; ok {
			return item
		}
		plain := strings.ReplaceAll(in, "_", "")
		if v, err := strconv.ParseInt(plain, 0, 64); err == nil {
			return int(v)
		}
		if v, err := strconv.ParseUint(plain, 0, 64); err == nil {
			return v
		}
		// Floats and binary ints (and what strconv reads as a float but
		// go-yaml as a string): give up.
		if _, err := strconv.ParseFloat(plain, 64); err == nil || strings.HasPrefix(plain, "0b") || strings.HasPrefix(plain, "-0b") {
			return 0.0
		}
		return in
	case c == '.':
		if _, ok := yamlWords[in]; ok {
			return 0.0
		}
		if _, err := strconv.ParseFloat(in, 64); err == nil {
			return 0.0
		}
		return in
	case strings.IndexByte("yYnNtTfFoO~", c) >= 0:
		if item, ok := yamlWords[in]; ok {
			return item
		}
	}
	return in
}

// notNumeric reports a character no int, float nor timestamp go-yaml
// resolves holds.
func notNumeric(r rune) bool {
	return !strings.ContainsRune("0123456789abcdefABCDEFxXoO_+-.:tTzZ ", r)
}

// yamlWords are the plain scalars go-yaml v2 resolves by name: booleans,
// null, and floats (0.0 here, for the caller to give up on).
var yamlWords = func() map[string]any {
	m := map[string]any{}
	for _, w := range []struct {
		v     any
		words string
	}{
		{true, "y Y yes Yes YES true True TRUE on On ON"},
		{false, "n N no No NO false False FALSE off Off OFF"},
		{nil, "~ null Null NULL"},
		{0.0, ".nan .NaN .NAN .inf .Inf .INF +.inf +.Inf +.INF -.inf -.Inf -.INF"},
	} {
		for _, s := range strings.Fields(w.words) {
			m[s] = w.v
		}
	}
	return m
}()

// yamlTimestampFormats are go-yaml v2's.
var yamlTimestampFormats = []string{
	"2006-1-2T15:4:5.999999999Z07:00",
	"2006-1-2t15:4:5.999999999Z07:00",
	"2006-1-2 15:4:5.999999999",
	"2006-1-2",
}

// isTimestamp is go-yaml v2's parseTimestamp.
func isTimestamp(s string) bool {
	i := 0
	for ; i < len(s); i++ {
		if c := s[i]; c < '0' || c > '9' {
			break
		}
	}
	if i != 4 || i == len(s) || s[i] != '-' {
		return false
	}
	for _, format := range yamlTimestampFormats {
		if _, err := time.Parse(format, s); err == nil {
			return true
		}
	}
	return false
}

// scanQuoted reads a quoted scalar at the start of b as go-yaml v2's
// scanner does (yaml_parser_scan_flow_scalar): its value and its length
// in b, closing quote included. With parent -1 it must end on its line;
// otherwise its lines after the first that are not blank must be
// indented past parent. Anything unusual reports false.
func scanQuoted(b []byte, parent int) (string, int, bool) {
	single := b[0] == '\''
	i := 1
	var s, leadingBreak, trailingBreaks, whitespaces []byte
	for {
		if i >= len(b) {
			return "", 0, false
		}
		leadingBlanks := false
		for i < len(b) && b[i] != ' ' && b[i] != '\n' {
			c := b[i]
			switch {
			case single && c == '\'' && i+1 < len(b) && b[i+1] == '\'':
				s = append(s, '\'')
				i += 2
				continue
			case single && c == '\'', !single && c == '"':
			case !single && c == '\\' && i+1 < len(b) && b[i+1] == '\n':
				if parent < 0 || !indentedPast(b, i+2, parent) {
					return "", 0, false
				}
				i += 2
				leadingBlanks = true
			case !single && c == '\\':
				if i+1 >= len(b) {
					return "", 0, false
				}
				codeLength := 0
				switch b[i+1] {
				case '0':
					s = append(s, 0)
				case 'a':
					s = append(s, '\x07')
				case 'b':
					s = append(s, '\x08')
				case 't':
					s = append(s, '\x09')
				case 'n':
					s = append(s, '\x0A')
				case 'v':
					s = append(s, '\x0B')
				case 'f':
					s = append(s, '\x0C')
				case 'r':
					s = append(s, '\x0D')
				case 'e':
					s = append(s, '\x1B')
				case ' ':
					s = append(s, ' ')
				case '"':
					s = append(s, '"')
				case '\'':
					s = append(s, '\'')
				case '\\':
					s = append(s, '\\')
				case 'N':
					s = append(s, "\u0085"...)
				case '_':
					s = append(s, "\u00a0"...)
				case 'L':
					s = append(s, "\u2028"...)
				case 'P':
					s = append(s, "\u2029"...)
				case 'x':
					codeLength = 2
				case 'u':
					codeLength = 4
				case 'U':
					codeLength = 8
				default:
					return "", 0, false
				}
				i += 2
				if codeLength > 0 {
					if i+codeLength > len(b) {
						return "", 0, false
					}
					v, err := strconv.ParseUint(string(b[i:i+codeLength]), 16, 32)
					if err != nil || (v >= 0xD800 && v <= 0xDFFF) || v > 0x10FFFF {
						return "", 0, false
					}
					s = utf8.AppendRune(s, rune(v))
					i += codeLength
				}
				continue
			default:
				s = append(s, c)
				i++
				continue
			}
			break
		}
		if i >= len(b) {
			return "", 0, false
		}
		if (single && b[i] == '\'') || (!single && b[i] == '"') {
			break
		}
		for i < len(b) && (b[i] == ' ' || b[i] == '\n') {
			if b[i] == ' ' {
				if !leadingBlanks {
					whitespaces = append(whitespaces, ' ')
				}
				i++
				continue
			}
			if parent < 0 {
				return "", 0, false
			}
			// A line break: the next line, if not blank, must be indented
			// past parent.
			if !indentedPast(b, i+1, parent) {
				return "", 0, false
			}
			if !leadingBlanks {
				whitespaces = whitespaces[:0]
				leadingBreak = append(leadingBreak[:0], '\n')
				leadingBlanks = true
			} else {
				trailingBreaks = append(trailingBreaks, '\n')
			}
			i++
		}
		if leadingBlanks {
			if len(leadingBreak) > 0 && leadingBreak[0] == '\n' {
				if len(trailingBreaks) == 0 {
					s = append(s, ' ')
				} else {
					s = append(s, trailingBreaks...)
				}
			} else {
				s = append(s, leadingBreak...)
				s = append(s, trailingBreaks...)
			}
			leadingBreak = leadingBreak[:0]
			trailingBreaks = trailingBreaks[:0]
		} else {
			s = append(s, whitespaces...)
			whitespaces = whitespaces[:0]
		}
	}
	return string(s), i + 1, true
}

// indentedPast reports the line starting at b[start:] blank or indented
// past parent.
func indentedPast(b []byte, start, parent int) bool {
	j := start
	for j < len(b) && b[j] == ' ' {
		j++
	}
	return j >= len(b) || b[j] == '\n' || j-start > parent
}
