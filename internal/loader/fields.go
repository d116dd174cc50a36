package loader

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	k8sjson "sigs.k8s.io/json"
)

// This file names fields for messages that would not: a value a type
// decodes itself (a quantity, a time) gives an error without its field,
// and an unknown field in the wrong case deserves its right name.

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// badField finds the field of raw whose value typ cannot decode, when
// that value is one a type decodes itself (resource.Quantity,
// metav1.Time, ...): the first such in key order, with its error.
func badField(raw []byte, typ reflect.Type) (string, error) {
	var v any
	if err := k8sjson.UnmarshalCaseSensitivePreserveInts(raw, &v); err != nil {
		return "", nil
	}
	var path []string
	err := findBad(v, typ, &path)
	return joinPath(path), err
}

func findBad(v any, t reflect.Type, path *[]string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		raw, err := json.Marshal(v)
		if err != nil {
			return nil
		}
		return k8sjson.UnmarshalCaseSensitivePreserveInts(raw, reflect.New(t).Interface())
	}
	at := func(elem string, v any, t reflect.Type) error {
		*path = append(*path, elem)
		if err := findBad(v, t, path); err != nil {
			return err
		}
		*path = (*path)[:len(*path)-1]
		return nil
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		var fields map[string]reflect.Type
		if t.Kind() == reflect.Struct {
			fields = jsonFields(t)
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			ft := t
			if t.Kind() == reflect.Map {
				ft = t.Elem()
			} else if ft = fields[k]; ft == nil {
				continue
			}
			if err := at(k, m[k], ft); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		a, ok := v.([]any)
		if !ok {
			return nil
		}
		for i, e := range a {
			if err := at("["+strconv.Itoa(i)+"]", e, t.Elem()); err != nil {
				return err
			}
		}
	}
	return nil
}

// jsonFields maps a struct's JSON field names to their types, embedded
// structs' fields included, as encoding/json sees them.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	fields := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
			for k, v := range jsonFields(ft) {
				if _, ok := fields[k]; !ok {
					fields[k] = v
				}
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		fields[name] = f.Type
	}
	return fields
}

// pathElem splits a strict error's path: "spec.containers[0].NAME" is
// spec, containers, [0], NAME.
var pathElem = regexp.MustCompile(`\[\d+\]|[^.\[]+`)

// caseHint is " (the field is \"nodeName\": field names are
// case-sensitive)" when a strict error's unknown field of typ differs
// from a field only in case, "" otherwise.
func caseHint(strictErr error, typ reflect.Type) string {
	path, ok := unknownFieldPath(strictErr)
	if !ok {
		return ""
	}
	elems := pathElem.FindAllString(path, -1)
	if len(elems) == 0 {
		return ""
	}
	t := typ
	for _, e := range elems[:len(elems)-1] {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch {
		case strings.HasPrefix(e, "[") && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array):
			t = t.Elem()
		case t.Kind() == reflect.Map:
			t = t.Elem()
		case t.Kind() == reflect.Struct:
			if t = jsonFields(t)[e]; t == nil {
				return ""
			}
		default:
			return ""
		}
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return ""
	}
	last := elems[len(elems)-1]
	var names []string
	for name := range jsonFields(t) {
		if strings.EqualFold(name, last) && name != last {
			names = append(names, name)
		}
	}
	if len(names) != 1 {
		return ""
	}
	return fmt.Sprintf(" (the field is %q: field names are case-sensitive)", names[0])
}
