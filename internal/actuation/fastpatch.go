package actuation

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// appendedConditionPatch is the strategic merge patch from a pod's status
// old to the same status with condition c appended (a victim getting its
// DisruptionTarget condition, the common case), written directly: byte
// for byte what CreateTwoWayMergePatch makes of the two marshalled pods
// (TestAppendedConditionPatch), without marshalling both statuses and
// diffing them, which took most of a preemption's actuation. ok is false
// for a condition list the direct form does not cover (an empty or
// repeated type, c's type already there, a probe time, no transition
// time, a string that is not UTF-8, which the diff's round trip through
// a decoder turns into U+FFFD where json.Marshal writes \ufffd): the
// caller then diffs.
func appendedConditionPatch(old *v1.PodStatus, c *v1.PodCondition) (patch []byte, ok bool) {
	n := len(old.Conditions)
	if c.Type == "" || !c.LastProbeTime.IsZero() || c.LastTransitionTime.IsZero() ||
		!utf8.ValidString(string(c.Type)) || !utf8.ValidString(string(c.Status)) || !utf8.ValidString(c.Reason) || !utf8.ValidString(c.Message) {
		return nil, false
	}
	for i := range old.Conditions {
		if old.Conditions[i].Type == "" || old.Conditions[i].Type == c.Type || !utf8.ValidString(string(old.Conditions[i].Type)) {
			return nil, false
		}
		for j := range i {
			if old.Conditions[j].Type == old.Conditions[i].Type {
				return nil, false
			}
		}
	}
	str := appendJSONString
	b := make([]byte, 0, 256+32*n+len(c.Message))
	b = append(b, `{"status":{`...)
	if n > 0 {
		b = append(b, `"$setElementOrder/conditions":[`...)
		for i := range old.Conditions {
			b = str(append(b, `{"type":`...), string(old.Conditions[i].Type))
			b = append(b, "},"...)
		}
		b = str(append(b, `{"type":`...), string(c.Type))
		b = append(b, '}')
		b = append(b, "],"...)
	}
	b = append(b, `"conditions":[{"lastProbeTime":null,"lastTransitionTime":`...)
	b = appendJSONTime(b, c.LastTransitionTime)
	if c.Message != "" {
		b = str(append(b, `,"message":`...), c.Message)
	}
	if c.ObservedGeneration != 0 {
		b = strconv.AppendInt(append(b, `,"observedGeneration":`...), c.ObservedGeneration, 10)
	}
	if c.Reason != "" {
		b = str(append(b, `,"reason":`...), c.Reason)
	}
	b = str(append(b, `,"status":`...), string(c.Status))
	b = str(append(b, `,"type":`...), string(c.Type))
	return append(b, "}]}}"...), true
}

// nominationPatch is the strategic merge patch from a pod's status to the
// same status with nominatedNodeName set to node ("" clears it), written
// directly: byte for byte what CreateTwoWayMergePatch makes of the two
// marshalled pods (TestNominationPatch), nil when they are equal (no
// patch is sent). ok is false for a name that is not UTF-8 (the diff's
// decoder turns it into U+FFFD): the caller then diffs.
func nominationPatch(old *v1.PodStatus, node string) (patch []byte, ok bool) {
	if !utf8.ValidString(node) || !utf8.ValidString(old.NominatedNodeName) {
		return nil, false
	}
	if old.NominatedNodeName == node {
		return nil, true
	}
	if node == "" {
		return []byte(`{"status":{"nominatedNodeName":null}}`), true
	}
	b := make([]byte, 0, len(`{"status":{"nominatedNodeName":""}}`)+len(node))
	b = appendJSONString(append(b, `{"status":{"nominatedNodeName":`...), node)
	return append(b, "}}"...), true
}

// appendJSONString appends s as encoding/json writes a string: plain
// printable ASCII directly, anything else through json.Marshal (its
// escapes of <, >, &, control characters, U+2028, U+2029 and invalid
// UTF-8).
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if !jsonPlain[s[i]] {
			q, _ := json.Marshal(s) // a string always marshals
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// jsonPlain marks the bytes encoding/json writes as they are: printable
// ASCII but for ", \\, <, > and &.
var jsonPlain = func() (t [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = !strings.ContainsRune(`"\\<>&`, rune(c))
	}
	return t
}()

// appendJSONTime appends t as metav1.Time marshals: RFC 3339 in UTC,
// whole seconds, null when zero (which the callers rule out). The last
// second written is kept: a decision's victims get the same one.
func appendJSONTime(b []byte, t metav1.Time) []byte {
	if t.IsZero() {
		return append(b, "null"...)
	}
	sec := t.Unix()
	if f := lastTime.Load(); f != nil && f.sec == sec {
		return append(b, f.text...)
	}
	f := &formattedTime{sec: sec, text: `"` + t.UTC().Format(time.RFC3339) + `"`}
	lastTime.Store(f)
	return append(b, f.text...)
}

type formattedTime struct {
	sec  int64
	text string // quoted
}

var lastTime atomic.Pointer[formattedTime]

// preemptionMessage is the DisruptionTarget condition's message,
// fmt.Sprintf("%s: preempting to accommodate a higher priority %s",
// scheduler, kind), kept for the last scheduler and kind: a decision
// writes it once per victim.
func preemptionMessage(scheduler, kind string) string {
	if m := lastMessage.Load(); m != nil && m.scheduler == scheduler && m.kind == kind {
		return m.text
	}
	m := &message{scheduler: scheduler, kind: kind, text: fmt.Sprintf("%s: preempting to accommodate a higher priority %s", scheduler, kind)}
	lastMessage.Store(m)
	return m.text
}

type message struct{ scheduler, kind, text string }

var lastMessage atomic.Pointer[message]
