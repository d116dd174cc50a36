package benchcmp

import (
	"bytes"
	"regexp"

	"golang.org/x/perf/benchfmt"
)

// implLevel finds a benchmark name's last level impl=NAME, before the
// GOMAXPROCS suffix (-N), if any.
var implLevel = regexp.MustCompile(`/impl=([^/]*?)(-[0-9]+)?$`)

// ImplSource is src's results of the implementation impl (their name's
// last level impl=impl), with that level written impl=* so that two
// implementations' results have the same names: `compare gate -base-impl
// A -head-impl B` gates B against A, from one file or two.
func ImplSource(src Source, impl string) Source { return implSource{src, []byte(impl)} }

type implSource struct {
	src  Source
	impl []byte
}

func (s implSource) Scan(fn func(rec *benchfmt.Result)) error {
	return s.src.Scan(func(rec *benchfmt.Result) {
		m := implLevel.FindSubmatchIndex(rec.Name)
		if m == nil || !bytes.Equal(rec.Name[m[2]:m[3]], s.impl) {
			return
		}
		name := rec.Name
		renamed := append(append(append([]byte(nil), name[:m[2]]...), '*'), name[m[3]:]...)
		rec.Name = renamed
		fn(rec)
		rec.Name = name
	})
}
