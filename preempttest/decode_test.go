package preempttest

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
