// Package releases runs earlier upstream releases: each is a module of its
// own, releases/<version>, holding only go.mod (it pins k8s.io/kubernetes
// and every staging module at that release, and replaces this repository
// with the checkout, ../..), go.sum and a main.go of one call to
// upstream/serve.Main: the one upstream adapter of this repository
// (package upstream) built at that release, with the release's build tags,
// served over package wire's protocol. A Release is built on first use,
// with `go build`, into the user's cache directory under a name that
// hashes the sources it is built from (the module's files and every file
// of the packages of this repository it imports, whatever their build
// tags), and reused afterwards; its Impl is a preempt.Implementation that
// runs the binary as a child (wire.Command).
//
// The releases are the rows of preempt.ReleaseTable before the current
// release (registry.Releases); docs/releases.md, "Adding a release", lists
// the files a new one touches.
//
// # Index
//
//   - [Release]: one earlier release; Binary builds it (once) and says
//     where it is, Sources and Hash name what it is built from.
//   - [New] and [Impl]: the release as a preempt.Implementation that runs
//     the binary as a child.
//   - [Module], [SourceRoot], [SourceEnv], [CacheDir] and [CacheEnv]:
//     where the sources and the binaries are.
package releases
