package upstream

import (
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// sortedPVInformer is the informer factory's PersistentVolume informer
// with an indexer that lists in name order. VolumeBinding matches an
// unbound claim to the first of the smallest fitting volumes it lists, and
// a claim to the first volume pre-bound to it (whether or not that one's
// node affinity admits the node), from its assume cache, which reads
// ByIndex of this indexer: upstream lists from the informer's map, so
// between equal volumes its filter answer is random. The contract takes
// volumes in name order. The world registers this informer for the type
// before any plugin asks for one, as it does sortedPDBInformer.
type sortedPVInformer struct {
	cache.SharedIndexInformer
}

func (i sortedPVInformer) GetIndexer() cache.Indexer {
	return sortedPVIndexer{i.SharedIndexInformer.GetIndexer()}
}

func newSortedPVInformer(client kubernetes.Interface, resync time.Duration) cache.SharedIndexInformer {
	return sortedPVInformer{coreinformers.NewPersistentVolumeInformer(client, resync,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})}
}

// sortedPVIndexer lists (List, ByIndex) in name order.
type sortedPVIndexer struct {
	cache.Indexer
}

func (x sortedPVIndexer) List() []any { return sortPVObjects(x.Indexer.List()) }

func (x sortedPVIndexer) ByIndex(name, value string) ([]any, error) {
	objs, err := x.Indexer.ByIndex(name, value)
	return sortPVObjects(objs), err
}

func sortPVObjects(objs []any) []any {
	slices.SortFunc(objs, func(a, b any) int {
		return strings.Compare(objectName(a), objectName(b))
	})
	return objs
}

func objectName(o any) string {
	if m, ok := o.(metav1.Object); ok {
		return m.GetName()
	}
	return ""
}
