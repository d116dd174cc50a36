// Package conformance is the conformance suite behind package preempttest,
// which is its public door (Run, RunTables, RunProperties and the Fuzz
// helpers). Its parts, each in files of its own:
//
//   - the tables (cases_*.go, releasecases.go, Tables): k8s.io/kubernetes'
//     own preemption test cases ported to the contract, and the project's
//     stage tests, with expected values;
//   - the problem domain and its generators (spec.go, gen.go, decode.go,
//     seeds.go, extenders.go: Spec, Gen, GenGang, GenMany, GenChange,
//     Decode, DecodeGang, Encode, Seeds);
//   - the checkers (check.go, stages.go, update.go, crossrelease.go:
//     CheckAgainstReference, CheckStages, CheckReuse, CheckGang,
//     CheckUpdate, CheckCrossRelease), each comparing an implementation
//     with the reference on one problem;
//   - the runner (run.go, fuzz.go: Run, RunTables, RunProperties,
//     Properties, Fuzz, FuzzGang, FuzzVictims, FuzzPick);
//   - the mutants that prove the suite catches real bugs
//     (mutants_test.go: the reference's single-pod stages re-composed
//     with one bug; mutants_podgroup_test.go: one of its pod-group stages,
//     internal/refstages, or one step of the pod-group cycle around it
//     replaced).
//
// It stands on the reference alone: it links neither upstream nor
// optimized.
package conformance
