// Package floor is the floor of a preemption decision: what any
// implementation of the contract must do for one decision on a
// resource-only cluster, written as plainly and as fast as the machine
// allows (Floor, New). The benchmarks run it as impl=floor of
// BenchmarkDecide (bench.Floor), to say how far an implementation is from
// the least a decision can cost. It is a measuring stick, not an
// implementation: it models no filter, PDB or parallelism, and refuses a
// cluster where they would matter.
//
// # Index
//
//   - [New] prepares the floor of deciding for a pod on a cluster (and
//     refuses what it does not model); [Floor.Decide] makes one decision.
//   - BenchmarkVisitFloor and BenchmarkDecideFloor (-floor.nodes) measure
//     it alone.
package floor
