package preempt

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	k8stesting "k8s.io/client-go/testing"
)

// Action is one API call made while actuating a decision, in the terms a
// reader compares: the verb, the object and, for a status patch, what it
// sets. Timestamps and messages inside patches are left out on purpose: they
// carry the wall clock.
type Action struct {
	Verb        string `json:"verb"`
	Subresource string `json:"subresource,omitempty"`
	Namespace   string `json:"namespace"`
	Name        string `json:"name"`
	// Sets summarises a status patch: "conditions[DisruptionTarget]",
	// "nominatedNodeName=node-1", "nominatedNodeName=null".
	Sets []string `json:"sets,omitempty"`
}

func (a Action) String() string {
	s := a.Verb + " " + Key(a.Namespace, a.Name)
	if a.Subresource != "" {
		s += "/" + a.Subresource
	}
	if len(a.Sets) > 0 {
		s += " " + strings.Join(a.Sets, " ")
	}
	return s
}

// Actions translates the mutating calls a fake clientset recorded on pods.
func Actions(recorded []k8stesting.Action) []Action {
	var out []Action
	for _, a := range recorded {
		if a.GetResource().Resource != "pods" {
			continue
		}
		switch a := a.(type) {
		case k8stesting.PatchAction:
			out = append(out, Action{
				Verb:        "patch",
				Subresource: a.GetSubresource(),
				Namespace:   a.GetNamespace(),
				Name:        a.GetName(),
				Sets:        patchSummary(a.GetPatch()),
			})
		case k8stesting.DeleteAction:
			out = append(out, Action{Verb: "delete", Namespace: a.GetNamespace(), Name: a.GetName()})
		case k8stesting.UpdateAction:
			out = append(out, Action{Verb: "update", Subresource: a.GetSubresource(), Namespace: a.GetNamespace()})
		case k8stesting.CreateAction:
			out = append(out, Action{Verb: "create", Subresource: a.GetSubresource(), Namespace: a.GetNamespace()})
		}
	}
	return out
}

func patchSummary(patch []byte) []string {
	var p struct {
		Status map[string]json.RawMessage `json:"status"`
	}
	if err := json.Unmarshal(patch, &p); err != nil {
		return []string{fmt.Sprintf("unparsable patch %q", patch)}
	}
	var sets []string
	for field, raw := range p.Status {
		switch {
		case field == "conditions":
			var conds []struct {
				Type string `json:"type"`
			}
			_ = json.Unmarshal(raw, &conds)
			for _, c := range conds {
				sets = append(sets, "conditions["+c.Type+"]")
			}
		case strings.HasPrefix(field, "$setElementOrder/"):
			// ordering directive of a strategic merge patch
		default:
			sets = append(sets, field+"="+strings.Trim(string(raw), `"`))
		}
	}
	sort.Strings(sets)
	return sets
}

// ClearedNominations lists the pods whose nomination a status patch cleared.
func ClearedNominations(actions []Action) []PodRef {
	out := []PodRef{}
	for _, a := range actions {
		if a.Verb != "patch" {
			continue
		}
		for _, s := range a.Sets {
			if s == "nominatedNodeName=null" {
				out = append(out, PodRef{Namespace: a.Namespace, Name: a.Name})
			}
		}
	}
	return out
}
