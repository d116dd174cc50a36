// Package preempttest is the conformance suite of the preempt contract, in
// the spirit of testing/fstest.TestFS: any implementation, in this module
// or another, calls
//
//	func TestConformance(t *testing.T) { preempttest.Run(t, myimpl.Impl{}) }
//	func FuzzConformance(f *testing.F) { preempttest.Fuzz(f, myimpl.Impl{}) }
//
// and is checked against the reference implementation (the oracle) by:
//
//   - the tables: k8s.io/kubernetes' own preemption test cases (at
//     upstream.Version) ported to the contract, and the project's stage tests, each with
//     its expected value compared by cmp.Diff (Tables);
//   - the properties: on problems drawn by rapid (Spec, Gen), the whole
//     decision, every stage, evaluator reuse across requests and GOMAXPROCS
//     1, 2 and 8 agree with the reference, and no call changes its input
//     (Properties);
//   - the fuzz helpers: the same checks on problems decoded from fuzzer
//     bytes (Decode), seeded with Seeds.
//
// Every table runs as a subtest, so a run reports each broken promise, not
// the first. The benchmarks get the same treatment in package bench
// (bench.Run).
package preempttest
