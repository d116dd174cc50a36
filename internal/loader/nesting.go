package loader

import "fmt"

// MaxNesting is the deepest nesting of mappings and sequences the loader
// decodes. A Pod is some 15 levels deep and a kubectl dump no deeper; the
// decoders' own bound (10000 levels) comes after go-yaml has built the
// whole tree, and a YAML document nested 20000 deep by indentation alone
// is 200 MB that took 1.5 GB before its refusal. checkNesting refuses it
// from the bytes, before any decoding.
const MaxNesting = 1000

// checkNesting refuses data nested deeper than MaxNesting, scanning its
// bytes once: the depth of a line is the number of indentation levels
// open above it (YAML's block collections), plus the sequence entries
// opened on it ("- - x"), plus the flow collections ([ and {, JSON's
// too) open outside quoted strings. It over-counts at most (a block
// scalar's indented lines, a bracket in a plain scalar), never under: a
// document it accepts is no deeper than MaxNesting.
func checkNesting(file string, data []byte) error {
	var indents []int // the indentation of the open block levels
	flow := 0         // open flow collections
	line := 1
	i := 0
	for i < len(data) {
		// The start of a line: its indentation.
		indent := 0
		for i < len(data) && data[i] == ' ' {
			indent++
			i++
		}
		if i < len(data) && data[i] != '\n' && data[i] != '\r' && data[i] != '#' {
			for len(indents) > 0 && indents[len(indents)-1] > indent {
				indents = indents[:len(indents)-1]
			}
			if len(indents) == 0 || indents[len(indents)-1] < indent {
				indents = append(indents, indent)
			}
			// Sequence entries opened on the line: "- - - x".
			for i+1 < len(data) && data[i] == '-' && (data[i+1] == ' ' || data[i+1] == '\n') {
				indent += 2
				indents = append(indents, indent)
				i += 2
				for i < len(data) && data[i] == ' ' {
					i++
					indent++
				}
				if len(indents)+flow > MaxNesting {
					return tooDeep(file, line)
				}
			}
		}
		// The rest of the line: flow collections and quoted strings.
		for i < len(data) && data[i] != '\n' {
			switch c := data[i]; c {
			case '[', '{':
				flow++
				if len(indents)+flow > MaxNesting {
					return tooDeep(file, line)
				}
			case ']', '}':
				if flow > 0 {
					flow--
				}
			case '"':
				// A JSON or YAML double-quoted string, escapes skipped; it
				// may span lines.
				for i++; i < len(data) && data[i] != '"'; i++ {
					if data[i] == '\\' {
						i++
					} else if data[i] == '\n' {
						line++
					}
				}
			case '#':
				if i == 0 || data[i-1] == ' ' || data[i-1] == '\t' {
					// A comment, to the end of the line.
					for i < len(data) && data[i] != '\n' {
						i++
					}
					continue
				}
			}
			i++
		}
		if len(indents)+flow > MaxNesting {
			return tooDeep(file, line)
		}
		i++ // the newline
		line++
	}
	return nil
}

func tooDeep(file string, line int) error {
	return fmt.Errorf("%s:%d: nested deeper than %d levels, which no Kubernetes object is (refused before decoding, whose memory grows with the depth)", file, line, MaxNesting)
}
