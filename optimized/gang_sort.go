package optimized

// The gang path sorts every potential victim unit of the cluster (a
// thousand at scheduler_perf's 100 nodes) by MoreImportantVictim. The
// leading criteria (priority, rank and size, then the earliest start)
// pack into two unsigned integers, radix-sorted (a pass per byte that
// differs among the units); only units equal on all of them are then
// ordered by compareUnits' final tie. The order is compareUnits' total
// order, so the result is sortUnits'.

// unitKey is a unit's leading criteria, ascending in sort order: hi packs
// the priority (high first), the rank (high first) and the size (large
// first), lo is the earliest start (early first); i is the unit's index.
type unitKey struct {
	hi, lo uint64
	i      int32
}

// maxKeyedSize is the largest unit size unitKey packs (24 bits).
const maxKeyedSize = 1<<24 - 1

// sortUnitsKeyed sorts us as d.sortUnits does, through keys (keys, tmp
// and buf are scratch, returned for reuse).
func (d *decision) sortUnitsKeyed(us []unitRef, keys, tmp []unitKey, buf []unitRef) ([]unitKey, []unitKey, []unitRef) {
	keys = keys[:0]
	for i := range us {
		u := &us[i]
		if u.size < 0 || u.size > maxKeyedSize {
			d.sortUnits(us)
			return keys, tmp, buf
		}
		prio := ^(uint64(uint32(u.prio) ^ 1<<31)) & 0xffffffff
		rank := ^(uint64(uint8(u.rank) ^ 1<<7)) & 0xff
		size := uint64(maxKeyedSize - u.size)
		keys = append(keys, unitKey{hi: prio<<32 | rank<<24 | size, lo: uint64(u.earliest) ^ 1<<63, i: int32(i)})
	}
	sorted := true
	for j := 1; j < len(keys) && sorted; j++ {
		sorted = d.compareKeyed(us, &keys[j-1], &keys[j]) < 0
	}
	if sorted {
		return keys, tmp, buf
	}
	if cap(tmp) < len(keys) {
		tmp = make([]unitKey, len(keys))
	}
	keys, tmp = radixSortKeys(keys, tmp[:len(keys)])
	// Units equal on every packed criterion, in runs: compareUnits' tie.
	for j := 0; j < len(keys); {
		k := j + 1
		for k < len(keys) && keys[k].hi == keys[j].hi && keys[k].lo == keys[j].lo {
			k++
		}
		run := keys[j:k]
		for a := 1; a < len(run); a++ {
			for b := a; b > 0 && d.compareUnits(&us[run[b].i], &us[run[b-1].i]) < 0; b-- {
				run[b], run[b-1] = run[b-1], run[b]
			}
		}
		j = k
	}
	buf = append(buf[:0], us...)
	for j := range keys {
		us[j] = buf[keys[j].i]
	}
	return keys, tmp, buf
}

// radixSortKeys sorts keys by (hi, lo), stably, with tmp (as long) as
// the other buffer: a counting pass per byte that differs among the
// keys, least significant first. It returns the sorted slice and the
// other buffer.
func radixSortKeys(keys, tmp []unitKey) ([]unitKey, []unitKey) {
	orHi, andHi, orLo, andLo := uint64(0), ^uint64(0), uint64(0), ^uint64(0)
	for j := range keys {
		orHi, andHi = orHi|keys[j].hi, andHi&keys[j].hi
		orLo, andLo = orLo|keys[j].lo, andLo&keys[j].lo
	}
	var count [256]int
	src, dst := keys, tmp
	for pass := range 16 {
		diff, shift, high := orLo^andLo, uint(pass*8), false
		if pass >= 8 {
			diff, shift, high = orHi^andHi, uint((pass-8)*8), true
		}
		if (diff>>shift)&0xff == 0 {
			continue
		}
		digit := func(k *unitKey) int {
			if high {
				return int(k.hi >> shift & 0xff)
			}
			return int(k.lo >> shift & 0xff)
		}
		clear(count[:])
		for j := range src {
			count[digit(&src[j])]++
		}
		at := 0
		for b := range count {
			at, count[b] = at+count[b], at
		}
		for j := range src {
			b := digit(&src[j])
			dst[count[b]] = src[j]
			count[b]++
		}
		src, dst = dst, src
	}
	return src, dst
}

func (d *decision) compareKeyed(us []unitRef, a, b *unitKey) int {
	switch {
	case a.hi != b.hi:
		if a.hi < b.hi {
			return -1
		}
		return 1
	case a.lo != b.lo:
		if a.lo < b.lo {
			return -1
		}
		return 1
	}
	return d.compareUnits(&us[a.i], &us[b.i])
}
