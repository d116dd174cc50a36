// Package fuzz holds the differential fuzz targets: any bytes decode into a
// preemption problem (conformance.Decode), and every implementation of the
// registry but the reference must agree with the reference on it. They live
// in one package so that `go test -fuzz` builds one instrumented binary, and
// their corpora are in testdata/fuzz/FuzzX/.
//
//	go test ./fuzz -run '^$' -fuzz '^FuzzPreempt$' -fuzztime 30s
//
// FuzzPreempt checks the whole decision and every stage;
// FuzzSelectVictimsOnNode SelectVictimsOnNode on every node, the cheapest
// stage to fuzz; FuzzPickOneNode SelectCandidate on every node's
// candidate, rotated; FuzzOptimizedParallelDryRun forces optimized's
// parallel dry run onto every input, with more workers than cores. The
// parsers' fuzz targets stay beside their parsers (scenario, benchcmp).
//
// A module fuzzes its own implementation with preempttest.Fuzz (see
// examples/ownimpl).
package fuzz
