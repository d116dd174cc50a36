package preempt

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	resourcehelper "k8s.io/component-helpers/resource"
)

// MaxQuantity bounds every request and allocatable value (in the unit the
// scheduler counts it: millicores for cpu, the base unit otherwise). It keeps
// every sum the scheduler makes far from int64 overflow.
const MaxQuantity = int64(1) << 53

// Key names a namespaced object as "namespace/name".
func Key(namespace, name string) string { return namespace + "/" + name }

// IsBound reports whether p is bound to a node.
func IsBound(p *v1.Pod) bool { return p.Spec.NodeName != "" }

// IsNominated reports whether p waits, unbound, on a nominated node.
func IsNominated(p *v1.Pod) bool { return p.Spec.NodeName == "" && p.Status.NominatedNodeName != "" }

// Validate rejects what no implementation could answer meaningfully: empty
// or duplicate names and UIDs, pods bound or nominated to unknown nodes,
// negative or overflow-sized quantities, invalid host ports. Each error names
// the object. PDB selectors are not checked: upstream treats an invalid
// selector as matching nothing, and so does every implementation.
func (c *Cluster) Validate() error {
	nodes := make(map[string]bool, len(c.Nodes))
	for i, n := range c.Nodes {
		if n == nil {
			return fmt.Errorf("node #%d is nil", i)
		}
		if _, err := register("node", i, &n.ObjectMeta, nodes); err != nil {
			return err
		}
		if err := checkResourceList("node "+n.Name+" allocatable", n.Status.Allocatable); err != nil {
			return err
		}
	}
	pods := make(map[string]bool, len(c.Pods))
	uids := make(map[types.UID]string, len(c.Pods))
	perNode := make(map[string]v1.ResourceList)
	for i, p := range c.Pods {
		if p == nil {
			return fmt.Errorf("pod #%d is nil", i)
		}
		key, err := register("pod", i, &p.ObjectMeta, pods)
		if err != nil {
			return err
		}
		if p.UID == "" {
			return fmt.Errorf("pod %s has no uid", key)
		}
		if other, ok := uids[p.UID]; ok {
			return fmt.Errorf("pod %s has the uid %q of pod %s", key, p.UID, other)
		}
		uids[p.UID] = key
		if err := ValidatePod(p); err != nil {
			return err
		}
		switch {
		case IsBound(p):
			if !nodes[p.Spec.NodeName] {
				return fmt.Errorf("pod %s is bound to unknown node %q", key, p.Spec.NodeName)
			}
			sum, err := addRequests(perNode[p.Spec.NodeName], p)
			if err != nil {
				return fmt.Errorf("node %s: %w", p.Spec.NodeName, err)
			}
			perNode[p.Spec.NodeName] = sum
		case IsNominated(p):
			if !nodes[p.Status.NominatedNodeName] {
				return fmt.Errorf("pod %s is nominated to unknown node %q", key, p.Status.NominatedNodeName)
			}
		}
	}
	pdbs := make(map[string]bool, len(c.PDBs))
	for i, pdb := range c.PDBs {
		if pdb == nil {
			return fmt.Errorf("poddisruptionbudget #%d is nil", i)
		}
		if _, err := register("poddisruptionbudget", i, &pdb.ObjectMeta, pdbs); err != nil {
			return err
		}
	}
	return nil
}

// register records object #i of kind in seen by its key (namespace/name,
// or the quoted name of a cluster-scoped object) and fails on an empty or
// repeated name.
func register(kind string, i int, m *metav1.ObjectMeta, seen map[string]bool) (string, error) {
	if m.Name == "" {
		return "", fmt.Errorf("%s #%d has no name", kind, i)
	}
	key, shown := Key(m.Namespace, m.Name), Key(m.Namespace, m.Name)
	if kind == "node" {
		key, shown = m.Name, fmt.Sprintf("%q", m.Name)
	}
	if seen[key] {
		return "", fmt.Errorf("%s %s appears twice", kind, shown)
	}
	seen[key] = true
	return key, nil
}

// ValidatePod checks one pod's quantities and host ports.
func ValidatePod(p *v1.Pod) error {
	key := Key(p.Namespace, p.Name)
	for _, cs := range [][]v1.Container{p.Spec.InitContainers, p.Spec.Containers} {
		for _, ctr := range cs {
			what := fmt.Sprintf("pod %s container %q", key, ctr.Name)
			if err := checkResourceList(what+" requests", ctr.Resources.Requests); err != nil {
				return err
			}
			if err := checkResourceList(what+" limits", ctr.Resources.Limits); err != nil {
				return err
			}
			for _, port := range ctr.Ports {
				if port.HostPort < 0 || port.HostPort > 65535 {
					return fmt.Errorf("%s: host port %d out of range 0..65535", what, port.HostPort)
				}
			}
		}
	}
	if err := checkResourceList("pod "+key+" overhead", p.Spec.Overhead); err != nil {
		return err
	}
	if p.Spec.Resources != nil {
		if err := checkResourceList("pod "+key+" pod-level requests", p.Spec.Resources.Requests); err != nil {
			return err
		}
	}
	if _, err := addRequests(nil, p); err != nil {
		return err
	}
	return nil
}

func scaled(name v1.ResourceName, q resource.Quantity) (int64, bool) {
	if name == v1.ResourceCPU {
		if q.Cmp(*resource.NewMilliQuantity(MaxQuantity, resource.DecimalSI)) > 0 {
			return 0, false
		}
		return q.MilliValue(), true
	}
	if q.Cmp(*resource.NewQuantity(MaxQuantity, resource.DecimalSI)) > 0 {
		return 0, false
	}
	return q.Value(), true
}

func checkResourceList(what string, rl v1.ResourceList) error {
	for name, q := range rl {
		if q.Sign() < 0 {
			return fmt.Errorf("%s: %s is negative (%s)", what, name, q.String())
		}
		if _, ok := scaled(name, q); !ok {
			return fmt.Errorf("%s: %s is too large (%s; at most %d %s)", what, name, q.String(), MaxQuantity, unit(name))
		}
	}
	return nil
}

func unit(name v1.ResourceName) string {
	if name == v1.ResourceCPU {
		return "millicores"
	}
	return "units"
}

// addRequests adds p's effective requests to sum, failing if a total leaves
// the range of MaxQuantity.
func addRequests(sum v1.ResourceList, p *v1.Pod) (v1.ResourceList, error) {
	reqs := resourcehelper.PodRequests(unaliased(p), resourcehelper.PodResourcesOptions{})
	out := sum.DeepCopy()
	if out == nil {
		out = v1.ResourceList{}
	}
	for name, q := range reqs {
		t := out[name]
		t.Add(q)
		if v, ok := scaled(name, t); !ok || v > MaxQuantity || v < 0 {
			return nil, fmt.Errorf("pod %s: total %s request %s is too large (at most %d %s)", Key(p.Namespace, p.Name), name, t.String(), MaxQuantity, unit(name))
		}
		out[name] = t
	}
	return out, nil
}

// ValidatePreemptor checks that p can be the preemptor on c: a valid pod
// with a uid that is not itself in the cluster.
func (c *Cluster) ValidatePreemptor(p *v1.Pod) error {
	if p == nil {
		return fmt.Errorf("no preemptor pod")
	}
	key := Key(p.Namespace, p.Name)
	if p.UID == "" {
		return fmt.Errorf("preemptor %s has no uid", key)
	}
	for _, q := range c.Pods {
		if q.Namespace == p.Namespace && q.Name == p.Name {
			return fmt.Errorf("preemptor %s is also in the cluster (on node %q)", key, q.Spec.NodeName)
		}
		if q.UID == p.UID {
			return fmt.Errorf("preemptor %s has the uid %q of pod %s", key, p.UID, Key(q.Namespace, q.Name))
		}
	}
	return ValidatePod(p)
}
