package harness

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	k8stesting "k8s.io/client-go/testing"

	"github.com/preemptbench/preemptbench/preempt"
)

// Actions translates the mutating calls a fake clientset recorded on pods.
func Actions(recorded []k8stesting.Action) []preempt.Action {
	return actions(recorded, nil)
}

// actions is Actions with the error each failed call got, by its index in
// recorded.
func actions(recorded []k8stesting.Action, failed map[int]string) []preempt.Action {
	var out []preempt.Action
	for i, a := range recorded {
		if a.GetResource().Resource != "pods" {
			continue
		}
		n := len(out)
		switch a.GetVerb() {
		case "patch":
			p := a.(k8stesting.PatchAction)
			out = append(out, preempt.Action{
				Verb:        "patch",
				Subresource: a.GetSubresource(),
				Namespace:   a.GetNamespace(),
				Name:        p.GetName(),
				Sets:        patchSummary(p.GetPatch()),
			})
		case "delete":
			out = append(out, preempt.Action{Verb: "delete", Namespace: a.GetNamespace(), Name: a.(k8stesting.DeleteAction).GetName()})
		case "update", "create":
			// UpdateAction and CreateAction have one method set: tell them
			// apart by the verb.
			out = append(out, preempt.Action{Verb: a.GetVerb(), Subresource: a.GetSubresource(), Namespace: a.GetNamespace()})
		}
		if msg, ok := failed[i]; ok && len(out) > n {
			out[n].Error = msg
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
func ClearedNominations(actions []preempt.Action) []preempt.PodRef {
	out := []preempt.PodRef{}
	for _, a := range actions {
		if a.Verb != "patch" {
			continue
		}
		for _, s := range a.Sets {
			if s == "nominatedNodeName=null" {
				out = append(out, preempt.PodRef{Namespace: a.Namespace, Name: a.Name})
			}
		}
	}
	return out
}
