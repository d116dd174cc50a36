package loader

import "testing"

// fataler is what the seed helpers need of a test or fuzz target:
// testing.TB has it, and so have the T and F of go-118-fuzz-build's testing
// package, which a libFuzzer build gives the file of its target
// (.clusterfuzzlite/build.sh). Helpers that a target's file shares with
// other files take it, not a type of package testing.
type fataler interface{ Fatal(args ...any) }

// addSeeds adds what seeds makes to f's corpus, in a test binary only. A
// libFuzzer build (go-118-fuzz-build) calls the whole target, seeding
// included, for every input, and its F.Add does nothing: there fastSeeds
// (2 s in a test binary, every shape as a kubectl List in YAML and JSON)
// took 10.6 s of each of FuzzFastPath's inputs, 94% of its time, and
// loadSeeds a share of FuzzLoadCluster's. This file holds no target, so
// its testing stays the standard package there too.
func addSeeds(f interface {
	fataler
	Add(args ...any)
}, seeds func(fataler) [][]byte) {
	if !testing.Testing() {
		return
	}
	for _, s := range seeds(f) {
		f.Add(s)
	}
}
