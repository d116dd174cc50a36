package preempt

import "strings"

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
	// Error is the error the API server answered, "" for success.
	Error string `json:"error,omitempty"`
}

func (a Action) String() string {
	s := a.Verb + " " + Key(a.Namespace, a.Name)
	if a.Subresource != "" {
		s += "/" + a.Subresource
	}
	if len(a.Sets) > 0 {
		s += " " + strings.Join(a.Sets, " ")
	}
	if a.Error != "" {
		s += " (failed: " + a.Error + ")"
	}
	return s
}
