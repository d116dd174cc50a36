package optimized

// nodeOf is s.nodeIndex[node]. A placement asks the gang view about
// Nodes() in order, member after member, and node i of the snapshot is
// s.names[i] (name order): the name after the one found last is tried
// before the map.
func (w *gangWorld) nodeOf(node string) (int32, bool) {
	s := w.s
	if k := w.nextName; k < len(s.names) && s.names[k] == node {
		w.nextName++
		return int32(k), true
	}
	n, ok := s.nodeIndex[node]
	if ok {
		w.nextName = int(n) + 1
	}
	return n, ok
}
