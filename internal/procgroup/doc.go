// Package procgroup runs a child process in a process group of its own,
// so that stopping it also stops what it started: the etcd
// scheduler_perf's framework starts from a benchmark binary, a release
// child's own children. A child killed alone leaves those running.
package procgroup
