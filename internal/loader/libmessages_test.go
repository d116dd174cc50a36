package loader

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v2"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sjson "sigs.k8s.io/json"
)

// Each test here pins what libmessages.go reads of a library's error: a
// dependency that changes it fails the test, not the loader's messages
// silently.

func TestLibJSONTypeError(t *testing.T) {
	_, err := k8sjson.UnmarshalStrict([]byte(`{"spec":{"priority":1.5}}`), &v1.Pod{})
	got, value, field, goType, ok := jsonTypeError(err)
	if !ok || got != "number" || value != "1.5" || field != "spec.priority" || goType != "int32" {
		t.Errorf("%v: %q %q %q %q %v", err, got, value, field, goType, ok)
	}
	err = json.Unmarshal([]byte(`"a"`), new(int))
	if got, value, field, goType, ok := jsonTypeError(err); !ok || got != "string" || value != "" || field != "" || goType != "int" {
		t.Errorf("%v: %q %q %q %q %v", err, got, value, field, goType, ok)
	}
	if _, _, _, _, ok := jsonTypeError(errors.New("json: cannot unmarshal string into Go value of type int")); ok {
		t.Error("a message taken for a type error")
	}
}

func TestLibJSONMessage(t *testing.T) {
	for _, e := range []error{
		json.Unmarshal([]byte(`"a"`), new(int)),
		k8sjson.UnmarshalCaseSensitivePreserveInts([]byte(`"a"`), new(int)),
		&json.UnsupportedValueError{Str: "NaN"},
	} {
		if !strings.HasPrefix(e.Error(), "json: ") || strings.HasPrefix(jsonMessage(e), "json") {
			t.Errorf("%q: %q", e, jsonMessage(e))
		}
	}
	// A syntax error has no prefix, and keeps its words.
	e := json.Unmarshal([]byte(`{`), new(any))
	if jsonMessage(e) != "unexpected end of JSON input" {
		t.Errorf("%q", jsonMessage(e))
	}
}

func TestLibTimeValue(t *testing.T) {
	err := k8sjson.UnmarshalCaseSensitivePreserveInts([]byte(`"yesterday"`), &metav1.Time{})
	if v, ok := timeValue(err); !ok || v != `"yesterday"` {
		t.Errorf("%v: %q %v", err, v, ok)
	}
}

func TestLibUnknownFieldPath(t *testing.T) {
	errs, err := k8sjson.UnmarshalStrict([]byte(`{"spec":{"NODENAME":"n","nodeName":"a","nodeName":"b"}}`), &v1.Pod{})
	if err != nil || len(errs) != 2 {
		t.Fatalf("%v, %v", errs, err)
	}
	var unknown, dup int
	for _, e := range errs {
		if p, ok := unknownFieldPath(e); ok {
			unknown++
			if p != "spec.NODENAME" || e.Error() != `unknown field "spec.NODENAME"` {
				t.Errorf("%q: path %q", e, p)
			}
		} else if e.Error() == `duplicate field "spec.nodeName"` {
			dup++
		}
	}
	if unknown != 1 || dup != 1 {
		t.Errorf("%q: %d unknown, %d duplicate", errs, unknown, dup)
	}
}

func TestLibYAMLMessages(t *testing.T) {
	err := yaml.Unmarshal([]byte("a: 1\nb: {c: d\n"), new(any))
	if m := yamlMessage(err); m != "line 2: did not find expected ',' or '}'" || !yamlLine.MatchString(m) {
		t.Errorf("%q: %q", err, m)
	}
	err = yaml.UnmarshalStrict([]byte("a: 1\nb: 2\na: 3\nb: 4\n"), new(any))
	var te *yaml.TypeError
	if !errors.As(err, &te) || len(te.Errors) != 2 || !yamlDuplicateKey(te.Errors[0]) || te.Errors[0] != `line 3: key "a" already set in map` {
		t.Errorf("%q", err)
	}
	if m := yamlMessage(err); m != `line 3: key "a" already set in map; line 4: key "b" already set in map` {
		t.Errorf("%q", m)
	}
	err = yaml.Unmarshal([]byte("{[a]: b}\n"), new(any))
	if err == nil || !yamlInvalidMapKey(err) {
		t.Errorf("%v", err)
	}
	if yamlInvalidMapKey(errors.New("yaml: line 1: did not find expected key")) || yamlDuplicateKey("line 1: cannot unmarshal !!str") {
		t.Error("other messages taken for these")
	}
}
