package scenario

import (
	"encoding/json"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/preemptbench/preemptbench/preempt"
)

// ListYAML renders c as the kubectl List LoadCluster reads.
func ListYAML(c *preempt.Cluster) ([]byte, error) {
	var items []runtime.RawExtension
	add := func(apiVersion, kind string, obj any) error {
		raw, err := json.Marshal(obj)
		if err != nil {
			return err
		}
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			return err
		}
		m["apiVersion"], m["kind"] = apiVersion, kind
		raw, err = json.Marshal(m)
		if err != nil {
			return err
		}
		items = append(items, runtime.RawExtension{Raw: raw})
		return nil
	}
	for _, n := range c.Nodes {
		if err := add("v1", "Node", n); err != nil {
			return nil, fmt.Errorf("node %s: %w", n.Name, err)
		}
	}
	for _, p := range c.Pods {
		if err := add("v1", "Pod", p); err != nil {
			return nil, fmt.Errorf("pod %s: %w", preempt.Key(p.Namespace, p.Name), err)
		}
	}
	for _, pdb := range c.PDBs {
		if err := add("policy/v1", "PodDisruptionBudget", pdb); err != nil {
			return nil, fmt.Errorf("poddisruptionbudget %s: %w", preempt.Key(pdb.Namespace, pdb.Name), err)
		}
	}
	return yaml.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
}

// PodYAML renders one pod.
func PodYAML(p *v1.Pod) ([]byte, error) {
	out := p.DeepCopy()
	out.APIVersion, out.Kind = "v1", "Pod"
	return yaml.Marshal(out)
}
