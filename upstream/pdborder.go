package upstream

import (
	"time"

	policy "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	policyinformers "k8s.io/client-go/informers/policy/v1"
	"k8s.io/client-go/kubernetes"
	policylisters "k8s.io/client-go/listers/policy/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/preemptbench/preemptbench/preempt"
)

// sortedPDBLister is the informer's PodDisruptionBudget lister with List in
// the contract's order, (namespace, name): upstream lists them from the
// informer's map, and from v1.37 FilterVictimsWithPDBViolation stops at the
// first PodDisruptionBudget a victim takes below zero, so with overlapping
// budgets the order decides which budgets the later victims still find.
//
// pdbOrder is that order; TestPDBOrderChangesTheDecision swaps it for
// another to show that upstream's decision depends on it.
type sortedPDBLister struct {
	policylisters.PodDisruptionBudgetLister
}

func (l sortedPDBLister) List(selector labels.Selector) ([]*policy.PodDisruptionBudget, error) {
	pdbs, err := l.PodDisruptionBudgetLister.List(selector)
	if err != nil {
		return nil, err
	}
	pdbOrder(pdbs)
	return pdbs, nil
}

var pdbOrder = preempt.SortPDBs

// sortedPDBInformer is the informer factory's PodDisruptionBudget informer
// with an indexer that lists in pdbOrder. PodGroupEvaluator (gang
// preemption) takes its lister from the factory itself, in an unexported
// field, so the lister cannot be wrapped as the single-pod Evaluator's is:
// the world registers this informer for the type before anyone asks for
// one, and every lister the factory gives reads through it.
type sortedPDBInformer struct {
	cache.SharedIndexInformer
}

func (i sortedPDBInformer) GetIndexer() cache.Indexer {
	return sortedPDBIndexer{i.SharedIndexInformer.GetIndexer()}
}

func newSortedPDBInformer(client kubernetes.Interface, resync time.Duration) cache.SharedIndexInformer {
	return sortedPDBInformer{policyinformers.NewPodDisruptionBudgetInformer(client, metav1.NamespaceAll, resync,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})}
}

// sortedPDBIndexer lists (List, ByIndex) in pdbOrder.
type sortedPDBIndexer struct {
	cache.Indexer
}

func (x sortedPDBIndexer) List() []any { return sortPDBObjects(x.Indexer.List()) }

func (x sortedPDBIndexer) ByIndex(name, value string) ([]any, error) {
	objs, err := x.Indexer.ByIndex(name, value)
	return sortPDBObjects(objs), err
}

func sortPDBObjects(objs []any) []any {
	pdbs := make([]*policy.PodDisruptionBudget, 0, len(objs))
	for _, o := range objs {
		pdb, ok := o.(*policy.PodDisruptionBudget)
		if !ok {
			return objs
		}
		pdbs = append(pdbs, pdb)
	}
	pdbOrder(pdbs)
	for i, pdb := range pdbs {
		objs[i] = pdb
	}
	return objs
}
