package reference

import (
	"sort"

	v1 "k8s.io/api/core/v1"

	"github.com/preemptbench/preemptbench/internal/podinfo"
)

// resources is the scheduler's view of a resource vector: cpu in millicores,
// the rest in base units, and the number of pods a node allows.
type resources struct {
	milliCPU         int64
	memory           int64
	ephemeralStorage int64
	allowedPods      int64
	scalar           map[v1.ResourceName]int64
}

// add adds a ResourceList, as upstream's framework.Resource.Add.
func (r *resources) add(rl v1.ResourceList, sign int64) {
	for name, q := range rl {
		switch name {
		case v1.ResourceCPU:
			r.milliCPU += sign * q.MilliValue()
		case v1.ResourceMemory:
			r.memory += sign * q.Value()
		case v1.ResourcePods:
			r.allowedPods += sign * q.Value()
		case v1.ResourceEphemeralStorage:
			r.ephemeralStorage += sign * q.Value()
		default:
			if podinfo.IsScalarResource(name) {
				if r.scalar == nil {
					r.scalar = map[v1.ResourceName]int64{}
				}
				r.scalar[name] += sign * q.Value()
			}
		}
	}
}

func (r resources) clone() resources {
	out := r
	out.scalar = make(map[v1.ResourceName]int64, len(r.scalar))
	for k, v := range r.scalar {
		out.scalar[k] = v
	}
	return out
}

// scalarNames returns the scalar resources in name order.
func (r resources) scalarNames() []v1.ResourceName {
	names := make([]v1.ResourceName, 0, len(r.scalar))
	for n := range r.scalar {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return names[i] < names[j] })
	return names
}
