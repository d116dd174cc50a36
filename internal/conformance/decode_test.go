package conformance

import (
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

// The decoder accepts any bytes and Encode inverts it: decoding,
// encoding and decoding again gives the same Spec, for random byte strings
// of every length and for the seeds.
func TestDecodeEncodeRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	inputs := [][]byte{nil, {}, {0}, {255}, {255, 255, 255, 255}}
	for _, s := range Seeds() {
		inputs = append(inputs, Encode(s))
	}
	for range 2000 {
		b := make([]byte, rng.IntN(600))
		for i := range b {
			b[i] = byte(rng.UintN(256))
		}
		inputs = append(inputs, b)
	}
	for _, b := range inputs {
		s := Decode(b)
		again := Decode(Encode(s))
		if diff := cmp.Diff(s, again); diff != "" {
			t.Fatalf("Decode(Encode(Decode(%x))) differs (-first +second):\n%s", b, diff)
		}
		if in := s.Build(); in.Cluster.Validate() != nil {
			t.Fatalf("Decode(%x) builds an invalid cluster: %v", b, in.Cluster.Validate())
		}
	}
}

// Every Spec in the decoder's range survives Encode then Decode exactly.
func TestEncodeDecodeOnGeneratedSpecs(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := Decode(rapid.SliceOf(rapid.Byte()).Draw(t, "bytes"))
		if diff := cmp.Diff(s, Decode(Encode(s))); diff != "" {
			t.Fatalf("(-spec +round trip):\n%s", diff)
		}
	})
}

// Fuzzer bytes reach pod groups in each mode: the gate on, with
// composites, and groups with the gate off; members bound and nominated.
func TestDecodeDrawsPodGroups(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var on, composite, off, members int
	for range 3000 {
		b := make([]byte, 300+rng.IntN(300))
		for i := range b {
			b[i] = byte(rng.UintN(256))
		}
		s := Decode(b)
		in := s.Build()
		switch {
		case len(s.Groups) == 0:
			continue
		case s.Composite:
			composite++
			if len(in.Cluster.CompositePodGroups) == 0 {
				t.Fatalf("composite spec without CompositePodGroups: %x", b)
			}
		case s.GenericWorkload:
			on++
		default:
			off++
		}
		if len(in.Cluster.PodGroups) != len(s.Groups) {
			t.Fatalf("%d PodGroups built for %d drawn", len(in.Cluster.PodGroups), len(s.Groups))
		}
		for _, p := range in.Cluster.Pods {
			if p.Spec.SchedulingGroup != nil {
				members++
				break
			}
		}
	}
	if on < 100 || composite < 100 || off < 100 || members < 300 {
		t.Errorf("pod groups drawn: %d gate on, %d composite, %d gate off, %d with members", on, composite, off, members)
	}
}
