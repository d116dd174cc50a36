package loader

import (
	"encoding/json"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v2"
	k8sjson "sigs.k8s.io/json"
)

// This file is the one place where the loader reads libraries' errors.
// Where a library gives a typed error (encoding/json's UnmarshalTypeError,
// time's ParseError, go-yaml's TypeError, sigs.k8s.io/json's FieldError)
// its fields are read; where it gives only text, the text read is here,
// each with a test in libmessages_test.go that fails when a dependency
// changes it.

// jsonTypeError is decoding's type error, JSON's words for what was found
// and Go's for what was wanted: got "number", value "1.5" (numbers
// only), field "spec.priority" ("" at the top), goType "int32".
func jsonTypeError(err error) (got, value, field, goType string, ok bool) {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) || te.Type == nil {
		return "", "", "", "", false
	}
	got, value, _ = strings.Cut(te.Value, " ")
	return got, value, te.Field, te.Type.String(), true
}

// jsonMessage is an encoding/json or sigs.k8s.io/json error's text
// without the "json: " both put first.
func jsonMessage(err error) string {
	return strings.TrimPrefix(err.Error(), "json: ")
}

// timeValue is the value time.Parse refused, quoted.
func timeValue(err error) (string, bool) {
	var pe *time.ParseError
	if !errors.As(err, &pe) {
		return "", false
	}
	return strconv.Quote(pe.Value), true
}

// unknownFieldPath is the path of a sigs.k8s.io/json strict error about an
// unknown field ("spec.NODENAME"). Its FieldError gives the path; only
// its text tells an unknown field from a duplicate one.
func unknownFieldPath(err error) (string, bool) {
	var fe k8sjson.FieldError
	if !errors.As(err, &fe) || !strings.HasPrefix(err.Error(), "unknown field ") {
		return "", false
	}
	return fe.FieldPath(), true
}

// yamlMessage is a go-yaml error on one line, without "yaml: ": a
// TypeError's findings joined by "; " ("line 4: cannot unmarshal ...").
func yamlMessage(err error) string {
	var te *yaml.TypeError
	var lines []string
	if errors.As(err, &te) {
		lines = te.Errors
	} else {
		lines = strings.Split(strings.TrimPrefix(err.Error(), "yaml: "), "\n")
	}
	var parts []string
	for _, l := range lines {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, "; ")
}

// yamlLine is how go-yaml's messages name a line: "line 4".
var yamlLine = regexp.MustCompile(`\bline (\d+)\b`)

// yamlDuplicateKey reports a finding of go-yaml's strict mode about a key
// given twice in a mapping.
func yamlDuplicateKey(finding string) bool {
	return strings.Contains(finding, "already set in map")
}

// yamlInvalidMapKey reports go-yaml's refusal of a sequence or a mapping
// as a key.
func yamlInvalidMapKey(err error) bool {
	return strings.Contains(err.Error(), "invalid map key: ")
}
