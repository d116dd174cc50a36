// Package preempttest is the conformance suite of the preempt contract, in
// the spirit of testing/fstest.TestFS: any implementation, in this module
// or another, runs it with one line a test and is checked against the
// reference implementation (the oracle).
//
// # Entry points
//
//   - [Run]: the whole suite, as subtests "tables" ([RunTables]) and
//     "properties" ([RunProperties]).
//   - [RunTables]: k8s.io/kubernetes' own preemption test cases (at the
//     release package upstream pins) ported to the contract, and the
//     project's stage tests, each with its expected value compared by
//     cmp.Diff.
//   - [RunProperties]: on problems drawn by rapid, the whole decision,
//     every stage, evaluator reuse across requests, Update for an
//     evaluator that is a preempt.Updater, gang preemption for a
//     preempt.PodGroupPreempter, and GOMAXPROCS 1, 2 and 8, each agreeing
//     with the reference, and no call changing its input. A property whose
//     every problem the implementation refused (preempt.Limited) fails: an
//     implementation that supports nothing passes nothing.
//   - [Fuzz], [FuzzGang], [FuzzVictims], [FuzzPick]: the same checks on
//     problems decoded from fuzzer bytes, seeded with the suite's seeds;
//     an input every implementation refuses is a skip, never a pass.
//
// The benchmarks get the same treatment in package bench (bench.Run), and
// an implementation in another process (built against another
// k8s.io/kubernetes release, say) is run through package wire.
//
// The suite's tables, generators, checkers and runner live in the
// module's internal/conformance; this package is their public door.
package preempttest
