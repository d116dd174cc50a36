// Package wire runs an implementation of the preempt contract in another
// process: a small versioned protocol over a long-running child's standard
// input and output, a server that wraps any preempt.Implementation in a
// main package (Main, Serve), and a client that is itself a
// preempt.Implementation (Command). An implementation built against
// another k8s.io/kubernetes release, in a module of its own, is compared
// with this module's through it: `compare decide -impl exec:CMD`, or
// preempttest.Run(t, wire.Command(...)).
//
// # The protocol (Protocol, one JSON value per line)
//
// The child starts by writing a Hello: the protocol version and its
// implementation's name. Then the parent sends Requests, one at a time,
// and the child answers each with a Response of the same ID. While it
// answers Preempt or PrepareCandidate, the child may send Calls instead:
// the API calls its implementation makes, which the parent makes on its
// own clientset (so that they are recorded, and fail, as in process) and
// answers with a CallResult; then the child goes on. Evaluators live in
// the child, named by the number NewEvaluator answered; the parent
// releases those it no longer holds in the next request. Filter and
// FilterCodes carry the feature gates and the release behaviour the
// parent's evaluator was given for its filter phase.
//
// A child that exits, writes something that is not the protocol (a line
// longer than MaxLineBytes), or does not read a request and answer it
// within the client's timeout is killed, with its process group: the
// call answers an error (an Error decision for Preempt), never hangs,
// and the next NewEvaluator starts a new child, unless the child failed
// its handshake (its Hello, within the same timeout), which is then every
// call's answer. Filter has no error to answer: a
// filter phase that fails in the child answers nothing found, and the
// evaluator's next Preempt is an Error decision naming the failure.
//
// # Index
//
//   - The child's side: [Main], [Serve].
//   - The parent's side: [Command] (a [Client], a preempt.Implementation),
//     [DefaultTimeout].
//   - The protocol's messages: [Hello], [Request], [Response], [Call],
//     [CallResult]; [Protocol], [MaxLineBytes].
package wire
