package schedplugin

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
)

// The plugin's args were decoded leniently: a misspelt field
// ("implementation", "IMPL") or a duplicate one was ignored, and the
// default implementation (optimized) ran where the configuration asked
// for another, silently. They are decoded strictly now, as kube-scheduler
// decodes its in-tree plugins' args.
func TestArgsUnknownOrDuplicateFieldRefused(t *testing.T) {
	for raw, want := range map[string]string{
		`{"implementation":"reference"}`:                 `unknown field "implementation"`,
		`{"IMPL":"reference"}`:                           `unknown field "IMPL"`,
		`{"impl":"reference","impl":"upstream"}`:         `duplicate field "impl"`,
		"implementation: reference\n":                    `unknown field "implementation"`,
		`{"impl":5}`:                                     "impl",
		`{"minCandidateNodesPercentage":"10"}`:           "minCandidateNodesPercentage",
		`{"minCandidateNodesPercentage":-1}`:             "not in valid range",
		`{"impl":"reference"}`:                           "",
		"impl: upstream\nminCandidateNodesAbsolute: 5\n": "",
	} {
		ct := runtime.ContentTypeJSON
		if !strings.HasPrefix(raw, "{") {
			ct = runtime.ContentTypeYAML
		}
		_, _, err := decodeArgs(&runtime.Unknown{Raw: []byte(raw), ContentType: ct})
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", raw, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: err %v, want one naming %s", raw, err, want)
		}
	}
}
