package optimized_test

import (
	"github.com/preemptbench/preemptbench/preempt"
	"testing"
)

func BenchmarkTmpFilterLookups(b *testing.B) {
	c, req := basicRequest(b, 5000)
	names := []string{}
	for _, n := range c.Nodes {
		names = append(names, n.Name)
	}
	b.Run("fixture-map", func(b *testing.B) {
		for b.Loop() {
			k := 0
			for _, n := range names {
				if req.Filter[n] == preempt.Unschedulable {
					k++
				}
			}
			_ = k
		}
	})
	m2 := map[string]preempt.Code{}
	for k, v := range req.Filter {
		m2[k] = v
	}
	b.Run("copied-map", func(b *testing.B) {
		for b.Loop() {
			k := 0
			for _, n := range names {
				if m2[n] == preempt.Unschedulable {
					k++
				}
			}
			_ = k
		}
	})
	m3 := map[string]int8{}
	for k := range req.Filter {
		m3[k] = 1
	}
	b.Run("int8-map", func(b *testing.B) {
		for b.Loop() {
			k := 0
			for _, n := range names {
				if m3[n] == 1 {
					k++
				}
			}
			_ = k
		}
	})
}

func BenchmarkTmpFilterLookups2(b *testing.B) {
	c, req := basicRequest(b, 5000)
	names := []string{}
	for _, n := range c.Nodes {
		names = append(names, n.Name)
	}
	b.Run("len-only", func(b *testing.B) {
		for b.Loop() {
			k := 0
			for _, n := range names {
				if len(req.Filter[n]) == 13 {
					k++
				}
			}
			_ = k
		}
	})
	b.Run("ok-only", func(b *testing.B) {
		for b.Loop() {
			k := 0
			for _, n := range names {
				if _, ok := req.Filter[n]; ok {
					k++
				}
			}
			_ = k
		}
	})
	m4 := map[string]int64{}
	for k := range req.Filter {
		m4[k] = 1
	}
	b.Run("int64-map", func(b *testing.B) {
		for b.Loop() {
			k := 0
			for _, n := range names {
				if m4[n] == 1 {
					k++
				}
			}
			_ = k
		}
	})
	m5 := map[string]string{}
	for k := range req.Filter {
		m5[k] = "Unschedulable"
	}
	b.Run("string-map-literal", func(b *testing.B) {
		for b.Loop() {
			k := 0
			for _, n := range names {
				if m5[n] == "Unschedulable" {
					k++
				}
			}
			_ = k
		}
	})
}

func BenchmarkTmpFilterLookups3(b *testing.B) {
	c, req := basicRequest(b, 5000)
	names := []string{}
	for _, n := range c.Nodes {
		names = append(names, n.Name)
	}
	b.Run("load-then-compare", func(b *testing.B) {
		for b.Loop() {
			k := 0
			for _, n := range names {
				v := req.Filter[n]
				if v == preempt.Unschedulable {
					k++
				}
			}
			_ = k
		}
	})
	b.Run("switch", func(b *testing.B) {
		for b.Loop() {
			k := 0
			for _, n := range names {
				switch req.Filter[n] {
				case preempt.Unschedulable:
					k++
				}
			}
			_ = k
		}
	})
	b.Run("compare-only", func(b *testing.B) {
		vals := []preempt.Code{}
		for _, n := range names {
			vals = append(vals, req.Filter[n])
		}
		for b.Loop() {
			k := 0
			for _, v := range vals {
				if v == preempt.Unschedulable {
					k++
				}
			}
			_ = k
		}
	})
}
