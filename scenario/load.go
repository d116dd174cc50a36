package scenario

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"sigs.k8s.io/yaml"

	"github.com/preemptbench/preemptbench/preempt"
)

// LoadCluster reads Nodes, Pods and policy/v1 PodDisruptionBudgets from a
// kubectl List (YAML or JSON, as `kubectl get nodes,pods,pdb -A -o yaml`
// prints it), a single object, or several YAML documents. Pods without a
// uid get "uid-<namespace>-<name>". Errors name the object and the file.
func LoadCluster(name string, data []byte) (*preempt.Cluster, error) {
	objs, err := decodeObjects(name, data)
	if err != nil {
		return nil, err
	}
	c := &preempt.Cluster{}
	for _, o := range objs {
		switch o := o.(type) {
		case *v1.Node:
			c.Nodes = append(c.Nodes, o)
		case *v1.Pod:
			c.Pods = append(c.Pods, o)
		case *policyv1.PodDisruptionBudget:
			c.PDBs = append(c.PDBs, o)
		}
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return c, nil
}

// LoadPod reads exactly one Pod (alone or as the only item of a List).
func LoadPod(name string, data []byte) (*v1.Pod, error) {
	objs, err := decodeObjects(name, data)
	if err != nil {
		return nil, err
	}
	if len(objs) != 1 {
		return nil, fmt.Errorf("%s: want exactly one Pod, found %d objects", name, len(objs))
	}
	p, ok := objs[0].(*v1.Pod)
	if !ok {
		return nil, fmt.Errorf("%s: want a Pod, found %T", name, objs[0])
	}
	if p.Spec.NodeName != "" {
		return nil, fmt.Errorf("%s: pod %s is already bound to node %q", name, preempt.Key(p.Namespace, p.Name), p.Spec.NodeName)
	}
	if err := preempt.ValidatePod(p); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return p, nil
}

// Unmodelled lists the features of p that the filters here do not model,
// so that a caller can warn that the decision ignores them.
func Unmodelled(p *v1.Pod) []string {
	var out []string
	if a := p.Spec.Affinity; a != nil && (a.PodAffinity != nil || a.PodAntiAffinity != nil) {
		out = append(out, "inter-pod affinity")
	}
	if len(p.Spec.TopologySpreadConstraints) > 0 {
		out = append(out, "topology spread constraints")
	}
	for _, v := range p.Spec.Volumes {
		if v.PersistentVolumeClaim != nil || v.Ephemeral != nil || v.CSI != nil {
			out = append(out, "volumes")
			break
		}
	}
	if len(p.Spec.ResourceClaims) > 0 {
		out = append(out, "resource claims")
	}
	return out
}

type typeMeta struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
}

func decodeObjects(file string, data []byte) ([]any, error) {
	var docs [][]byte
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, fmt.Errorf("%s: empty file", file)
	}
	if trimmed[0] == '{' || trimmed[0] == '[' {
		docs = [][]byte{trimmed}
	} else {
		for _, d := range splitYAML(data) {
			j, err := yaml.YAMLToJSON(d)
			if err != nil {
				return nil, fmt.Errorf("%s: malformed YAML: %w", file, err)
			}
			if s := strings.TrimSpace(string(j)); s != "null" && s != "" {
				docs = append(docs, j)
			}
		}
	}
	var out []any
	for i, doc := range docs {
		var tm typeMeta
		if err := json.Unmarshal(doc, &tm); err != nil {
			return nil, fmt.Errorf("%s: document %d: malformed: %w", file, i+1, err)
		}
		if tm.Kind == "List" || strings.HasSuffix(tm.Kind, "List") {
			var list struct {
				Items []json.RawMessage `json:"items"`
			}
			if err := json.Unmarshal(doc, &list); err != nil {
				return nil, fmt.Errorf("%s: %s: malformed: %w", file, tm.Kind, err)
			}
			for j, item := range list.Items {
				o, err := decodeObject(item)
				if err != nil {
					return nil, fmt.Errorf("%s: item %d: %w", file, j, err)
				}
				out = append(out, o)
			}
			continue
		}
		o, err := decodeObject(doc)
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", file, i+1, err)
		}
		out = append(out, o)
	}
	return out, nil
}

func splitYAML(data []byte) [][]byte {
	var docs [][]byte
	var cur []string
	for _, line := range strings.Split(string(data), "\n") {
		if strings.TrimRight(line, " \t\r") == "---" {
			docs = append(docs, []byte(strings.Join(cur, "\n")))
			cur = nil
			continue
		}
		cur = append(cur, line)
	}
	return append(docs, []byte(strings.Join(cur, "\n")))
}

func decodeObject(raw []byte) (any, error) {
	var tm typeMeta
	if err := json.Unmarshal(raw, &tm); err != nil {
		return nil, fmt.Errorf("malformed object: %w", err)
	}
	what := strings.ToLower(tm.Kind) + " " + preempt.Key(tm.Metadata.Namespace, tm.Metadata.Name)
	if tm.Metadata.Namespace == "" {
		what = strings.ToLower(tm.Kind) + " " + tm.Metadata.Name
	}
	switch {
	case tm.Kind == "Node" && tm.APIVersion == "v1":
		n := &v1.Node{}
		if err := json.Unmarshal(raw, n); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		n.TypeMeta = metav1.TypeMeta{}
		return n, nil
	case tm.Kind == "Pod" && tm.APIVersion == "v1":
		p := &v1.Pod{}
		if err := json.Unmarshal(raw, p); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		p.TypeMeta = metav1.TypeMeta{}
		if p.Namespace == "" {
			p.Namespace = metav1.NamespaceDefault
		}
		if p.UID == "" {
			p.UID = types.UID("uid-" + p.Namespace + "-" + p.Name)
		}
		if err := checkPodSelectors(p); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		return p, nil
	case tm.Kind == "PodDisruptionBudget" && tm.APIVersion == "policy/v1":
		pdb := &policyv1.PodDisruptionBudget{}
		if err := json.Unmarshal(raw, pdb); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		pdb.TypeMeta = metav1.TypeMeta{}
		if pdb.Namespace == "" {
			pdb.Namespace = metav1.NamespaceDefault
		}
		// The API server rejects an invalid selector; a dump holding one
		// was edited by hand, so say so rather than match nothing.
		if _, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector); err != nil {
			return nil, fmt.Errorf("%s: invalid selector: %w", what, err)
		}
		return pdb, nil
	case tm.Kind == "":
		return nil, fmt.Errorf("object %q has no kind", tm.Metadata.Name)
	default:
		return nil, fmt.Errorf("%s: unsupported kind %s %q (want v1 Node, v1 Pod or policy/v1 PodDisruptionBudget)", what, tm.APIVersion, tm.Kind)
	}
}

func checkPodSelectors(p *v1.Pod) error {
	if a := p.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		if _, err := nodeaffinity.NewNodeSelector(a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution); err != nil {
			return fmt.Errorf("invalid required node affinity: %w", err)
		}
	}
	return nil
}
