package optimized

import (
	"cmp"
	"slices"
)

// The gang path sorts every potential victim unit of the cluster (a
// thousand at scheduler_perf's 100 nodes) by MoreImportantVictim. The
// leading criteria (priority, rank and size, then the earliest start)
// pack into two integers compared directly; only units equal on all of
// them reach compareUnits' final tie. The order is compareUnits' total
// order, so the result is sortUnits'.

// unitKey is a unit's leading criteria, ascending in sort order: hi packs
// the priority (high first), the rank (high first) and the size (large
// first), lo is the earliest start (early first); i is the unit's index.
type unitKey struct {
	hi uint64
	lo int64
	i  int32
}

// maxKeyedSize is the largest unit size unitKey packs (24 bits).
const maxKeyedSize = 1<<24 - 1

// sortUnitsKeyed sorts us as d.sortUnits does, through keys (keys and
// buf are scratch, returned for reuse).
func (d *decision) sortUnitsKeyed(us []unitRef, keys []unitKey, buf []unitRef) ([]unitKey, []unitRef) {
	keys = keys[:0]
	for i := range us {
		u := &us[i]
		if u.size < 0 || u.size > maxKeyedSize {
			d.sortUnits(us)
			return keys, buf
		}
		prio := ^(uint64(uint32(u.prio) ^ 1<<31)) & 0xffffffff
		rank := ^(uint64(uint8(u.rank) ^ 1<<7)) & 0xff
		size := uint64(maxKeyedSize - u.size)
		keys = append(keys, unitKey{hi: prio<<32 | rank<<24 | size, lo: u.earliest, i: int32(i)})
	}
	if slices.IsSortedFunc(keys, func(a, b unitKey) int { return d.compareKeyed(us, &a, &b) }) {
		return keys, buf
	}
	slices.SortFunc(keys, func(a, b unitKey) int { return d.compareKeyed(us, &a, &b) })
	buf = append(buf[:0], us...)
	for j := range keys {
		us[j] = buf[keys[j].i]
	}
	return keys, buf
}

func (d *decision) compareKeyed(us []unitRef, a, b *unitKey) int {
	if a.hi != b.hi {
		return cmp.Compare(a.hi, b.hi)
	}
	if a.lo != b.lo {
		return cmp.Compare(a.lo, b.lo)
	}
	return d.compareUnits(&us[a.i], &us[b.i])
}
