// Package releases runs earlier upstream releases: each is a module of its
// own, releases/<version> (its go.mod pins k8s.io/kubernetes at that
// release and uses this repository's preempt and wire packages), whose
// main package serves the upstream adapter at that release over package
// wire's protocol. A Release is built on first use, with `go build`, into
// the user's cache directory under a name that hashes the sources it is
// built from, and reused afterwards; its Impl is a preempt.Implementation
// that runs the binary as a child (wire.Command).
//
// The registry lists the releases (registry.Releases): adding one is a
// module directory and one line there.
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
