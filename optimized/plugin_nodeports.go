package optimized

import (
	v1 "k8s.io/api/core/v1"

	"github.com/preemptbench/preemptbench/internal/podinfo"
)

var reasonsNodePorts = []string{"node(s) didn't have free ports for the requested pod ports"}

// nodePortsState is NodePorts' PreFilter state: the host ports the
// preemptor wants, none when upstream's PreFilter Skips. Its per-node
// state is nodeUse.ports, which addPorts and removePorts (AddPod and
// RemovePod) keep.
type nodePortsState struct {
	want []podinfo.HostPort
}

func newNodePortsState(pod *v1.Pod) nodePortsState {
	return nodePortsState{want: podinfo.AppendHostPorts(nil, pod)}
}

// on reports whether the plugin runs (upstream's PreFilter did not Skip).
func (st *nodePortsState) on() bool { return len(st.want) > 0 }

// filter is NodePorts' Filter on the ports in use in u and nom; nil means
// it passes.
func (st *nodePortsState) filter(u, nom *nodeUse) []string {
	for _, w := range st.want {
		if conflict(w, u.ports, nom.ports) {
			return reasonsNodePorts
		}
	}
	return nil
}

func (u *nodeUse) addPorts(ps []podinfo.HostPort) {
	for _, p := range ps {
		found := false
		for _, q := range u.ports {
			if q == p {
				found = true
				break
			}
		}
		if !found {
			u.ports = append(u.ports, p)
		}
	}
}

func (u *nodeUse) removePorts(ps []podinfo.HostPort) {
	for _, p := range ps {
		for i, q := range u.ports {
			if q == p {
				u.ports[i] = u.ports[len(u.ports)-1]
				u.ports = u.ports[:len(u.ports)-1]
				break
			}
		}
	}
}

func conflict(want podinfo.HostPort, sets ...[]podinfo.HostPort) bool {
	for _, set := range sets {
		for _, used := range set {
			if want.Conflicts(used) {
				return true
			}
		}
	}
	return false
}
