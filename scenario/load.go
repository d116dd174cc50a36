package scenario

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	policyv1beta1 "k8s.io/api/policy/v1beta1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	_ "k8s.io/kubernetes/pkg/apis/core/install" // defaulting of core/v1, as the API server applies it
	"k8s.io/kubernetes/pkg/apis/policy"
	_ "k8s.io/kubernetes/pkg/apis/policy/install" // policy/v1beta1 <-> v1 conversion
	_ "k8s.io/kubernetes/pkg/apis/storage/install"
	"sigs.k8s.io/yaml"

	"github.com/preemptbench/preemptbench/preempt"
)

// LoadPaths reads one cluster from files and directories, as kubectl and
// kube-scheduler would see it:
//
//   - a file holds a kubectl List or a typed list (NodeList, PodList, ...;
//     items without kind take it from the list, as kubectl and client-go
//     do), single objects, several YAML documents or JSON values, or a
//     JSON array of them;
//   - a directory is read whole (every *.json, *.yaml and *.yml below it,
//     in name order), as `kubectl cluster-info dump --output-directory`
//     writes it;
//   - policy/v1beta1 PodDisruptionBudgets are converted to policy/v1 as the
//     API server serves them, and every object gets the API server's
//     defaulting (a container's limits become its requests when it has
//     none, a node's capacity its allocatable, ...);
//   - pods in phase Succeeded or Failed, pods bound to a node the dump does
//     not hold and pods nominated to one are left out, as kube-scheduler's
//     informer and snapshot leave them out; each is reported in a note;
//   - objects of kinds the filters do not read (Services, Events, ...) are
//     skipped, with a note.
//
// Errors name the file and the object.
func LoadPaths(paths []string) (*preempt.Cluster, []string, error) {
	var r reader
	for _, p := range paths {
		if err := r.readPath(p); err != nil {
			return nil, nil, err
		}
	}
	return r.cluster()
}

// LoadCluster is LoadPaths on one file's contents.
func LoadCluster(name string, data []byte) (*preempt.Cluster, []string, error) {
	var r reader
	if err := r.readFile(name, data); err != nil {
		return nil, nil, err
	}
	return r.cluster()
}

// LoadPod reads exactly one Pod (alone or as the only item of a List),
// defaulted as the API server would.
func LoadPod(name string, data []byte) (*v1.Pod, error) {
	var r reader
	if err := r.readFile(name, data); err != nil {
		return nil, err
	}
	if n := len(r.objects); n != 1 || len(r.skipped) > 0 {
		return nil, fmt.Errorf("%s: want exactly one Pod, found %d objects", name, n+len(r.skipped))
	}
	p, ok := r.objects[0].(*v1.Pod)
	if !ok {
		return nil, fmt.Errorf("%s: want a Pod, found a %s", name, kindOf(r.objects[0]))
	}
	if p.Spec.NodeName != "" {
		return nil, fmt.Errorf("%s: pod %s is already bound to node %q", name, preempt.Key(p.Namespace, p.Name), p.Spec.NodeName)
	}
	if err := preempt.ValidatePod(p); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return p, nil
}

func kindOf(o runtime.Object) string {
	switch o.(type) {
	case *v1.Node:
		return "Node"
	case *v1.Pod:
		return "Pod"
	case *policyv1.PodDisruptionBudget:
		return "PodDisruptionBudget"
	}
	return strings.TrimPrefix(fmt.Sprintf("%T", o), "*")
}

// reader collects the objects of every file read.
type reader struct {
	objects  []runtime.Object
	skipped  []string // "v1 Service default/svc"
	inferred []string // files whose kind-less objects got their kind from their fields
}

func (r *reader) readPath(path string) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !info.IsDir() {
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return r.readFile(path, data)
	}
	var files []string
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch strings.ToLower(filepath.Ext(p)) {
		case ".json", ".yaml", ".yml":
			if !d.IsDir() {
				files = append(files, p)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("%s: no .json, .yaml or .yml file in the directory", path)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		if err := r.readFile(f, data); err != nil {
			return err
		}
	}
	return nil
}

// readFile splits a file into documents and decodes each.
func (r *reader) readFile(file string, data []byte) error {
	docs, err := documents(file, data)
	if err != nil {
		return err
	}
	for i, doc := range docs {
		where := fmt.Sprintf("%s: document %d", file, i+1)
		if len(docs) == 1 {
			where = file
		}
		if err := r.readDocument(file, where, doc); err != nil {
			return err
		}
	}
	return nil
}

// documents splits a file: a JSON array, a stream of JSON values, or YAML
// documents.
func documents(file string, data []byte) ([]json.RawMessage, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, fmt.Errorf("%s: empty file", file)
	}
	var docs []json.RawMessage
	switch trimmed[0] {
	case '[':
		if err := json.Unmarshal(trimmed, &docs); err != nil {
			return nil, fmt.Errorf("%s: malformed JSON array: %w", file, err)
		}
		return docs, nil
	case '{':
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		for {
			var doc json.RawMessage
			err := dec.Decode(&doc)
			if err == io.EOF {
				return docs, nil
			}
			if err != nil {
				off := dec.InputOffset()
				var syn *json.SyntaxError
				if errors.As(err, &syn) {
					off = syn.Offset
				}
				if len(docs) > 0 {
					line := 1 + bytes.Count(trimmed[:min(int(off), len(trimmed))], []byte("\n"))
					return nil, fmt.Errorf("%s: not a kubectl dump: %d JSON documents, then text that is not JSON at line %d (%v); "+
						"`kubectl cluster-info dump` writes container logs into its output stream: run it with --output-directory DIR and pass DIR", file, len(docs), line, err)
				}
				return nil, fmt.Errorf("%s: malformed JSON: %w", file, err)
			}
			docs = append(docs, doc)
		}
	}
	for _, d := range splitYAML(data) {
		j, err := yaml.YAMLToJSON(d)
		if err != nil {
			return nil, fmt.Errorf("%s: malformed YAML: %w", file, err)
		}
		if s := strings.TrimSpace(string(j)); s != "null" && s != "" {
			docs = append(docs, j)
		}
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("%s: empty file", file)
	}
	return docs, nil
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

type typeMeta struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
}

// readDocument decodes a list (its items) or a single object.
func (r *reader) readDocument(file, where string, doc json.RawMessage) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(doc, &fields); err != nil {
		return fmt.Errorf("%s: malformed: want an object: %w", where, err)
	}
	var tm typeMeta
	if err := json.Unmarshal(doc, &tm); err != nil {
		return fmt.Errorf("%s: malformed: %w", where, err)
	}
	if tm.Kind == "" {
		if _, internal := fields["Items"]; internal {
			return fmt.Errorf("%s: not in a versioned API form: no kind or apiVersion, and \"Items\" capitalised, as in the internal form kubectl 1.8 printed; "+
				"dump the cluster again with a current kubectl (kubectl get nodes,pods,pdb -A -o json)", where)
		}
	}
	if !strings.HasSuffix(tm.Kind, "List") {
		return r.readObject(file, where, doc, "", "")
	}
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(doc, &list); err != nil {
		return fmt.Errorf("%s: %s: malformed: %w", where, tm.Kind, err)
	}
	itemKind := strings.TrimSuffix(tm.Kind, "List") // "" for a plain List
	for j, item := range list.Items {
		if err := r.readObject(file, fmt.Sprintf("%s: item %d", where, j), item, tm.APIVersion, itemKind); err != nil {
			return err
		}
	}
	return nil
}

// readObject decodes one object. listAPIVersion and listKind are the
// typed list's, which an item without its own takes.
func (r *reader) readObject(file, where string, raw json.RawMessage, listAPIVersion, listKind string) error {
	var tm typeMeta
	if err := json.Unmarshal(raw, &tm); err != nil {
		return fmt.Errorf("%s: malformed object: %w", where, err)
	}
	if tm.Kind == "" && listKind != "" {
		tm.Kind = listKind
		if tm.APIVersion == "" {
			tm.APIVersion = listAPIVersion
		}
	}
	if tm.Kind == "" {
		kind, ok := inferKind(raw)
		if !ok {
			return fmt.Errorf("%s: object %q has no kind", where, tm.Metadata.Name)
		}
		tm.Kind, tm.APIVersion = kind, "v1"
		if !slices.Contains(r.inferred, file) {
			r.inferred = append(r.inferred, file)
		}
	}
	what := strings.ToLower(tm.Kind) + " " + tm.Metadata.Name
	if tm.Metadata.Namespace != "" {
		what = strings.ToLower(tm.Kind) + " " + preempt.Key(tm.Metadata.Namespace, tm.Metadata.Name)
	}
	var obj runtime.Object
	switch tm.APIVersion + " " + tm.Kind {
	case "v1 Node":
		obj = &v1.Node{}
	case "v1 Pod":
		obj = &v1.Pod{}
	case "policy/v1 PodDisruptionBudget", "policy/v1beta1 PodDisruptionBudget":
		obj = &policyv1.PodDisruptionBudget{}
	case "v1 Namespace":
		obj = &v1.Namespace{}
	case "v1 PersistentVolumeClaim":
		obj = &v1.PersistentVolumeClaim{}
	case "v1 PersistentVolume":
		obj = &v1.PersistentVolume{}
	case "storage.k8s.io/v1 StorageClass":
		obj = &storagev1.StorageClass{}
	case "storage.k8s.io/v1 CSINode":
		obj = &storagev1.CSINode{}
	default:
		switch tm.Kind {
		case "Node", "Pod", "PodDisruptionBudget", "Namespace", "PersistentVolumeClaim", "PersistentVolume", "StorageClass", "CSINode":
			return fmt.Errorf("%s: %s: unsupported apiVersion %q for kind %s", where, what, tm.APIVersion, tm.Kind)
		}
		r.skipped = append(r.skipped, strings.TrimSpace(tm.APIVersion+" "+tm.Kind))
		return nil
	}
	if tm.APIVersion == "policy/v1beta1" {
		pdb, err := convertV1beta1PDB(raw)
		if err != nil {
			return fmt.Errorf("%s: %s: %w", where, what, err)
		}
		obj = pdb
	} else if err := json.Unmarshal(raw, obj); err != nil {
		return fmt.Errorf("%s: %s: %w", where, what, err)
	}
	if err := admit(obj); err != nil {
		return fmt.Errorf("%s: %s: %w", where, what, err)
	}
	r.objects = append(r.objects, obj)
	return nil
}

// inferKind names the kind of an object that carries none (the Insights
// Operator archives single objects so) from fields only that kind has: a
// Pod's spec.containers, a Node's status.nodeInfo.
func inferKind(raw json.RawMessage) (string, bool) {
	var o struct {
		Spec struct {
			Containers json.RawMessage `json:"containers"`
		} `json:"spec"`
		Status struct {
			NodeInfo json.RawMessage `json:"nodeInfo"`
		} `json:"status"`
	}
	if json.Unmarshal(raw, &o) != nil {
		return "", false
	}
	switch {
	case len(o.Spec.Containers) > 0 && len(o.Status.NodeInfo) == 0:
		return "Pod", true
	case len(o.Status.NodeInfo) > 0 && len(o.Spec.Containers) == 0:
		return "Node", true
	}
	return "", false
}

// convertV1beta1PDB converts as the API server does: v1beta1 to the
// internal form to v1 (an empty v1beta1 selector matches no pod, and
// stays so in v1).
func convertV1beta1PDB(raw json.RawMessage) (*policyv1.PodDisruptionBudget, error) {
	in := &policyv1beta1.PodDisruptionBudget{}
	if err := json.Unmarshal(raw, in); err != nil {
		return nil, err
	}
	legacyscheme.Scheme.Default(in)
	internal := &policy.PodDisruptionBudget{}
	if err := legacyscheme.Scheme.Convert(in, internal, nil); err != nil {
		return nil, fmt.Errorf("converting policy/v1beta1 to policy/v1: %w", err)
	}
	out := &policyv1.PodDisruptionBudget{}
	if err := legacyscheme.Scheme.Convert(internal, out, nil); err != nil {
		return nil, fmt.Errorf("converting policy/v1beta1 to policy/v1: %w", err)
	}
	return out, nil
}

// admit applies the API server's defaulting and the checks the API server
// would have made of what the filters read.
func admit(obj runtime.Object) error {
	legacyscheme.Scheme.Default(obj)
	switch o := obj.(type) {
	case *v1.Node:
		o.TypeMeta = metav1.TypeMeta{}
	case *v1.Pod:
		o.TypeMeta = metav1.TypeMeta{}
		if o.Namespace == "" {
			o.Namespace = metav1.NamespaceDefault
		}
		if o.UID == "" {
			o.UID = types.UID("uid-" + o.Namespace + "-" + o.Name)
		}
		return checkPodSelectors(o)
	case *policyv1.PodDisruptionBudget:
		o.TypeMeta = metav1.TypeMeta{}
		if o.Namespace == "" {
			o.Namespace = metav1.NamespaceDefault
		}
		// The API server rejects an invalid selector; a dump holding one
		// was edited by hand, so say so rather than match nothing.
		if _, err := metav1.LabelSelectorAsSelector(o.Spec.Selector); err != nil {
			return fmt.Errorf("invalid selector: %w", err)
		}
	case *v1.PersistentVolumeClaim:
		if o.Namespace == "" {
			o.Namespace = metav1.NamespaceDefault
		}
	}
	return nil
}

func checkPodSelectors(p *v1.Pod) error {
	if a := p.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		if _, err := nodeaffinity.NewNodeSelector(a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution); err != nil {
			return fmt.Errorf("invalid required node affinity: %w", err)
		}
	}
	return nil
}

// cluster builds the cluster of the objects read, leaving out what
// kube-scheduler never sees, and validates it.
func (r *reader) cluster() (*preempt.Cluster, []string, error) {
	c := &preempt.Cluster{}
	nodes := map[string]bool{}
	for _, o := range r.objects {
		if n, ok := o.(*v1.Node); ok {
			nodes[n.Name] = true
		}
	}
	var terminal, offNode []string
	for _, o := range r.objects {
		switch o := o.(type) {
		case *v1.Node:
			c.Nodes = append(c.Nodes, o)
		case *v1.Pod:
			key := preempt.Key(o.Namespace, o.Name)
			switch {
			case o.Status.Phase == v1.PodSucceeded || o.Status.Phase == v1.PodFailed:
				terminal = append(terminal, key)
			case o.Spec.NodeName != "" && !nodes[o.Spec.NodeName]:
				offNode = append(offNode, fmt.Sprintf("%s (bound to %s)", key, o.Spec.NodeName))
			case o.Spec.NodeName == "" && o.Status.NominatedNodeName != "" && !nodes[o.Status.NominatedNodeName]:
				offNode = append(offNode, fmt.Sprintf("%s (nominated to %s)", key, o.Status.NominatedNodeName))
			default:
				c.Pods = append(c.Pods, o)
			}
		case *policyv1.PodDisruptionBudget:
			c.PDBs = append(c.PDBs, o)
		case *v1.Namespace:
			c.Namespaces = append(c.Namespaces, o)
		case *v1.PersistentVolumeClaim:
			c.PVCs = append(c.PVCs, o)
		case *v1.PersistentVolume:
			c.PVs = append(c.PVs, o)
		case *storagev1.StorageClass:
			c.StorageClasses = append(c.StorageClasses, o)
		case *storagev1.CSINode:
			c.CSINodes = append(c.CSINodes, o)
		}
	}
	var notes []string
	if len(r.inferred) > 0 {
		notes = append(notes, fmt.Sprintf("objects without kind taken as Node (they have status.nodeInfo) or Pod (spec.containers) in %d files: %s", len(r.inferred), abbreviate(r.inferred)))
	}
	if len(terminal) > 0 {
		notes = append(notes, fmt.Sprintf("left out %d pods in phase Succeeded or Failed, which kube-scheduler's informer never lists: %s", len(terminal), abbreviate(terminal)))
	}
	if len(offNode) > 0 {
		notes = append(notes, fmt.Sprintf("left out %d pods of nodes the dump does not hold, which kube-scheduler's snapshot never holds: %s", len(offNode), abbreviate(offNode)))
	}
	if len(r.skipped) > 0 {
		notes = append(notes, fmt.Sprintf("skipped %d objects of kinds the filters do not read: %s", len(r.skipped), countKinds(r.skipped)))
	}
	if err := c.Validate(); err != nil {
		return nil, nil, err
	}
	return c, notes, nil
}

func abbreviate(items []string) string {
	const most = 5
	if len(items) <= most {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:most], ", "), len(items)-most)
}

func countKinds(kinds []string) string {
	count := map[string]int{}
	for _, k := range kinds {
		count[k]++
	}
	names := make([]string, 0, len(count))
	for k := range count {
		names = append(names, k)
	}
	sort.Strings(names)
	var parts []string
	for _, k := range names {
		parts = append(parts, fmt.Sprintf("%d %s", count[k], k))
	}
	return strings.Join(parts, ", ")
}
