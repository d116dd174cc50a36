package loader

import (
	"fmt"
	"reflect"
	"sync"
)

// MaxDecodedBytes is the default bound on what a cluster's objects take
// once decoded (Options.MaxDecodedBytes, decide's -max-decoded-bytes).
// Bytes of text do not bound memory: an object decodes to between one and
// some thirty times its text (a pod's empty tolerations "{}", 3 bytes,
// take 87 bytes each; 200,000 tiny pods, 38 MB of JSON, took 0.5 GB), and
// the implementations and a decision's API calls take up to as much
// again. A cluster at Kubernetes' limits (150,000 tiny pods on 5000
// nodes) takes some 360 MiB, and is decided under 1 GB by every
// implementation; a dump of 5000 nodes and 20000 pods takes 64 MiB.
const MaxDecodedBytes = 384 << 20

// decodedTooLarge is the refusal of the object that takes the cluster's
// decoded objects over max bytes.
func decodedTooLarge(where, what string, total, max int64) error {
	return &decodedTooLargeError{where, what, total, max}
}

type decodedTooLargeError struct {
	where, what string
	total, max  int64
}

func (e *decodedTooLargeError) Error() string {
	mib := func(n int64) int64 { return (n + 1<<20 - 1) >> 20 }
	return fmt.Sprintf("%s: %s: the cluster's objects take %d MiB once decoded with it, more than %d MiB, the limit on the memory a cluster takes (raise it with -max-decoded-bytes)", e.where, e.what, mib(e.total), e.max>>20)
}

// decodedSize is an estimate of the memory v (the value a pointer points
// to, and all it refers to) takes: its type's size and, walked, every
// string's bytes, slice's backing array and map's entries. It is
// deterministic (a function of the value alone) and costs some
// microseconds for a pod.
func decodedSize(obj any) int64 {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return 0
	}
	return int64(v.Type().Elem().Size()) + indirectSize(v.Elem())
}

// indirectSize is what v refers to, beyond v's own type's size.
func indirectSize(v reflect.Value) int64 {
	switch v.Kind() {
	case reflect.String:
		return int64(v.Len())
	case reflect.Pointer:
		if v.IsNil() {
			return 0
		}
		return int64(v.Type().Elem().Size()) + indirectSize(v.Elem())
	case reflect.Interface:
		if v.IsNil() {
			return 0
		}
		e := v.Elem()
		return int64(e.Type().Size()) + indirectSize(e)
	case reflect.Slice:
		if v.IsNil() {
			return 0
		}
		n := int64(v.Cap()) * int64(v.Type().Elem().Size())
		if hasIndirect(v.Type().Elem()) {
			for i := range v.Len() {
				n += indirectSize(v.Index(i))
			}
		}
		return n
	case reflect.Map:
		if v.IsNil() {
			return 0
		}
		// A Swiss table: groups of 8 slots and 8 control bytes, at most
		// 7/8 full, in tables whose size doubles as they grow.
		t := v.Type()
		slots := int64(8)
		for slots*7/8 < int64(v.Len()) {
			slots *= 2
		}
		n := 48 + slots*int64(t.Key().Size()+t.Elem().Size()+1)
		if hasIndirect(t.Key()) || hasIndirect(t.Elem()) {
			it := v.MapRange()
			for it.Next() {
				n += indirectSize(it.Key()) + indirectSize(it.Value())
			}
		}
		return n
	case reflect.Array:
		var n int64
		if hasIndirect(v.Type().Elem()) {
			for i := range v.Len() {
				n += indirectSize(v.Index(i))
			}
		}
		return n
	case reflect.Struct:
		var n int64
		for _, i := range indirectFields(v.Type()) {
			n += indirectSize(v.Field(i))
		}
		return n
	}
	return 0
}

// fieldPlans are, for each struct type, the indexes of its fields that
// refer to memory (indirectFields).
var fieldPlans sync.Map // reflect.Type -> []int

// indirectFields are the indexes of t's fields that may refer to memory
// beyond t: a pod's walk visits those only.
func indirectFields(t reflect.Type) []int {
	if p, ok := fieldPlans.Load(t); ok {
		return p.([]int)
	}
	var idx []int
	for i := range t.NumField() {
		if hasIndirect(t.Field(i).Type) {
			idx = append(idx, i)
		}
	}
	fieldPlans.Store(t, idx)
	return idx
}

// hasIndirect reports whether a value of t may refer to memory beyond its
// own size.
func hasIndirect(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.String, reflect.Pointer, reflect.Interface, reflect.Slice, reflect.Map:
		return true
	case reflect.Array:
		return t.Len() > 0 && hasIndirect(t.Elem())
	case reflect.Struct:
		return len(indirectFields(t)) > 0
	}
	return false
}
