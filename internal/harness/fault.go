package harness

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// Fault makes the fake API server fail every call of Verb ("patch" or
// "delete") on one pod, Subresource "status" for a status patch, with a
// Forbidden error (not retried, unlike a conflict).
type Fault struct {
	Verb        string
	Subresource string
	Namespace   string
	Name        string
}

// ParseFault reads VERB:NAMESPACE/NAME[/status], e.g. "delete:default/web-1"
// or "patch:default/web-1/status".
func ParseFault(s string) (Fault, error) {
	verb, obj, ok := strings.Cut(s, ":")
	if !ok {
		return Fault{}, fmt.Errorf("fault %q: want VERB:NAMESPACE/NAME[/status]", s)
	}
	f := Fault{Verb: verb}
	switch verb {
	case "patch", "delete":
	default:
		return Fault{}, fmt.Errorf("fault %q: verb %q, want patch or delete", s, verb)
	}
	parts := strings.Split(obj, "/")
	switch {
	case len(parts) == 2:
	case len(parts) == 3 && parts[2] == "status" && verb == "patch":
		f.Subresource = "status"
	default:
		return Fault{}, fmt.Errorf("fault %q: want VERB:NAMESPACE/NAME[/status] (status only for patch)", s)
	}
	if parts[0] == "" || parts[1] == "" {
		return Fault{}, fmt.Errorf("fault %q: empty namespace or name", s)
	}
	f.Namespace, f.Name = parts[0], parts[1]
	return f, nil
}

func (f Fault) String() string {
	s := f.Verb + ":" + f.Namespace + "/" + f.Name
	if f.Subresource != "" {
		s += "/" + f.Subresource
	}
	return s
}

// errInjected is the cause of every injected error.
var errInjected = errors.New("injected by preemptbench")

// faults installs fs on cs and returns what maps the index of a recorded
// action to the error it got.
func faults(cs *fake.Clientset, fs []Fault) func() map[int]string {
	var mu sync.Mutex
	current := -1
	failed := map[int]string{}
	for _, f := range fs {
		f := f
		cs.PrependReactor(f.Verb, "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
			if a.GetNamespace() != f.Namespace || a.GetSubresource() != f.Subresource || nameOf(a) != f.Name {
				return false, nil, nil
			}
			err := apierrors.NewForbidden(v1.Resource("pods"), f.Name, errInjected)
			mu.Lock()
			failed[current] = err.Error()
			mu.Unlock()
			return true, nil, err
		})
	}
	// First in the chain: numbers every call, as the clientset records it.
	cs.PrependReactor("*", "*", func(k8stesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		current++
		mu.Unlock()
		return false, nil, nil
	})
	return func() map[int]string {
		mu.Lock()
		defer mu.Unlock()
		out := make(map[int]string, len(failed))
		for k, v := range failed {
			out[k] = v
		}
		return out
	}
}

func nameOf(a k8stesting.Action) string {
	switch a := a.(type) {
	case k8stesting.PatchAction:
		return a.GetName()
	case k8stesting.DeleteAction:
		return a.GetName()
	}
	return ""
}
