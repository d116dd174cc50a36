// Package postfilter composes DefaultPreemption's PostFilter from an
// evaluator's stages (preempt.Evaluator), with the extenders' client
// (package extender) and actuation (package actuation): what reference,
// optimized and an implementation that provides only the stages use as
// their Preempt. It is not part of the contract.
//
// # Index
//
//   - [PreemptWithStages]: Evaluator.Preempt written over an evaluator's
//     stages, for implementations that provide only the stages.
package postfilter
