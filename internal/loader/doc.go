// Package loader reads clusters and pods as kubectl dumps them (`kubectl
// get nodes,pods,pdb -A -o yaml`, `kubectl cluster-info dump`), and as
// the API server and kube-scheduler would see them: decoded as the API
// server decodes (unknown and duplicate fields noted, or refused under
// Options.Strict), defaulted, with what the scheduler never sees left out,
// every such change said in a note. LoadPaths and LoadPathsWith read
// files and directories, LoadCluster and LoadClusterWith bytes, LoadPod
// and LoadPodWith a preemptor; the limits (MaxInputBytes, MaxPodBytes,
// MaxObjectBytes, MaxNesting, and MaxDecodedBytes on what the objects
// take decoded, memsize.go) bound what any input costs. Big kubectl Lists are split
// into items and decoded on every core (fast.go); anything else goes
// through the general reader (load.go, yamldoc.go). Synthetic clusters are
// package synth's.
package loader
