package harness

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/preemptbench/preemptbench/internal/testobj"
	"github.com/preemptbench/preemptbench/preempt"
)

// TestNewClientsetAnswersAsEager runs one sequence of calls on the lazy
// clientset and on one holding every pod up front, and compares every
// answer and the pods left at the end.
func TestNewClientsetAnswersAsEager(t *testing.T) {
	c := &preempt.Cluster{PDBs: []*policyv1.PodDisruptionBudget{testobj.MakePDB().Namespace("ns").Name("pdb").Obj()}}
	for i := range 6 {
		c.Pods = append(c.Pods, testobj.MakePod().Namespace("ns").Name(fmt.Sprintf("p%d", i)).UID(fmt.Sprint(i)).Node("n").Obj())
	}
	preemptor := testobj.MakePod().Namespace("ns").Name("hi").UID("hi").Obj()
	eager := func() kubernetes.Interface {
		var objs []runtime.Object
		for _, p := range c.Pods {
			objs = append(objs, p.DeepCopy())
		}
		objs = append(objs, preemptor.DeepCopy(), c.PDBs[0].DeepCopy())
		return fake.NewSimpleClientset(objs...)
	}
	patch := []byte(`{"status":{"nominatedNodeName":"n"}}`)
	type step func(ctx context.Context, cs kubernetes.Interface) string
	ans := func(o any, err error) string {
		if err != nil {
			return "error: " + err.Error()
		}
		switch o := o.(type) {
		case *v1.Pod:
			return "pod " + o.Name + " " + o.Status.NominatedNodeName
		case *v1.PodList:
			s := "list"
			for _, p := range o.Items {
				s += " " + p.Name
			}
			return s
		}
		return fmt.Sprintf("%T", o)
	}
	pods := func(cs kubernetes.Interface) interface {
		Get(context.Context, string, metav1.GetOptions) (*v1.Pod, error)
	} {
		return cs.CoreV1().Pods("ns")
	}
	steps := []step{
		func(ctx context.Context, cs kubernetes.Interface) string {
			return ans(pods(cs).Get(ctx, "p1", metav1.GetOptions{}))
		},
		func(ctx context.Context, cs kubernetes.Interface) string {
			return ans(nil, cs.CoreV1().Pods("ns").Delete(ctx, "p2", metav1.DeleteOptions{}))
		},
		func(ctx context.Context, cs kubernetes.Interface) string {
			return ans(pods(cs).Get(ctx, "p2", metav1.GetOptions{}))
		},
		func(ctx context.Context, cs kubernetes.Interface) string {
			return ans(nil, cs.CoreV1().Pods("ns").Delete(ctx, "p2", metav1.DeleteOptions{}))
		},
		func(ctx context.Context, cs kubernetes.Interface) string {
			return ans(cs.CoreV1().Pods("ns").Patch(ctx, "p3", types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status"))
		},
		func(ctx context.Context, cs kubernetes.Interface) string {
			return ans(cs.CoreV1().Pods("ns").Patch(ctx, "hi", types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status"))
		},
		func(ctx context.Context, cs kubernetes.Interface) string {
			return ans(cs.CoreV1().Pods("ns").Patch(ctx, "gone", types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status"))
		},
		func(ctx context.Context, cs kubernetes.Interface) string {
			return ans(cs.CoreV1().Pods("other").Get(ctx, "p1", metav1.GetOptions{}))
		},
		func(ctx context.Context, cs kubernetes.Interface) string {
			return ans(cs.CoreV1().Pods("ns").Create(ctx, c.Pods[4].DeepCopy(), metav1.CreateOptions{}))
		},
		func(ctx context.Context, cs kubernetes.Interface) string {
			return ans(cs.CoreV1().Pods("ns").List(ctx, metav1.ListOptions{}))
		},
		func(ctx context.Context, cs kubernetes.Interface) string {
			return ans(cs.PolicyV1().PodDisruptionBudgets("ns").Get(ctx, "pdb", metav1.GetOptions{}))
		},
	}
	// Every prefix of the sequence, then the whole of it, so that the
	// list comes both before and after single-pod calls.
	for n := 1; n <= len(steps); n++ {
		var got, want []string
		lazy, full := NewClientset(c, preemptor), eager()
		for _, s := range steps[:n] {
			got = append(got, s(t.Context(), lazy))
			want = append(want, s(t.Context(), full))
		}
		list := steps[len(steps)-2]
		got = append(got, list(t.Context(), lazy))
		want = append(want, list(t.Context(), full))
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("after %d steps, the lazy clientset answers differently (-eager +lazy):\n%s", n, d)
		}
	}
}

// TestNewClientsetCopiesOnlyWhatIsNamed checks the point of laziness: a
// cluster's pods are copied into the store only when a call names them.
func TestNewClientsetCopiesOnlyWhatIsNamed(t *testing.T) {
	c := &preempt.Cluster{}
	for i := range 1000 {
		c.Pods = append(c.Pods, testobj.MakePod().Namespace("ns").Name(fmt.Sprintf("p%d", i)).Obj())
	}
	cs := NewClientset(c, nil)
	if err := cs.CoreV1().Pods("ns").Delete(t.Context(), "p7", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	objs, err := cs.Tracker().List(v1.SchemeGroupVersion.WithResource("pods"), v1.SchemeGroupVersion.WithKind("Pod"), "ns")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(objs.(*v1.PodList).Items); n != 0 {
		t.Errorf("store holds %d pods after deleting the one named, want 0", n)
	}
	if _, err := cs.CoreV1().Pods("ns").Get(t.Context(), "p8", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	objs, _ = cs.Tracker().List(v1.SchemeGroupVersion.WithResource("pods"), v1.SchemeGroupVersion.WithKind("Pod"), "ns")
	if n := len(objs.(*v1.PodList).Items); n != 1 {
		t.Errorf("store holds %d pods after one get, want 1", n)
	}
}
