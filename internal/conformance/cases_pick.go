package conformance

// SelectCandidate is upstream's pickOneNodeForPreemption: fewest PDB
// violations, lowest highest-priority victim, smallest sum of priorities
// (each shifted by MaxInt32+1), fewest victims, latest start time of the
// highest-priority victims, then the first in list order. One row per
// criterion deciding alone.

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/preemptbench/preemptbench/internal/agreement"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/reference"
)

// victimSpec is one victim of a candidate: its priority and, unless
// noStart, its start time as a distance before now (negative: after now).
type victimSpec struct {
	prio    int32
	age     time.Duration
	noStart bool
}

func vs(prio int32) victimSpec { return victimSpec{prio: prio, age: time.Hour} }

func vsAt(prio int32, age time.Duration) victimSpec { return victimSpec{prio: prio, age: age} }

type candSpec struct {
	node    string
	pdb     int
	victims []victimSpec
}

// buildPick makes the candidates and a cluster holding their victims
// (bound to the candidate's node, named "<node>-v<i>").
func buildPick(specs []candSpec) (*preempt.Cluster, []preempt.Candidate) {
	c := &preempt.Cluster{}
	var cands []preempt.Candidate
	for _, s := range specs {
		c.Nodes = append(c.Nodes, node(s.node, "1").Obj())
		cand := preempt.Candidate{Node: s.node, NumPDBViolations: s.pdb}
		for i, v := range s.victims {
			name := fmt.Sprintf("%s-v%d", s.node, i)
			p := pod("default", name, v.prio).Node(s.node).Phase(v1.PodRunning)
			if !v.noStart {
				p.StartTime(ago(v.age))
			}
			c.Pods = append(c.Pods, p.Obj())
			cand.Victims = append(cand.Victims, vic("default", name, v.prio))
		}
		cands = append(cands, cand)
	}
	return c, cands
}

func testSelectCandidateCriteria(t *testing.T, impl preempt.Implementation) {
	const (
		minP = math.MinInt32
		maxP = math.MaxInt32
	)
	tests := []struct {
		name  string
		cands []candSpec
		want  string // "" for nil
	}{
		{name: "no candidate", want: ""},
		{
			name:  "a single candidate is returned whatever its score",
			cands: []candSpec{{node: "a", pdb: 3, victims: []victimSpec{vs(maxP), vs(maxP)}}},
			want:  "a",
		},
		// 1. fewest PDB violations
		{
			name: "fewest PDB violations decides",
			cands: []candSpec{
				{node: "a", pdb: 1, victims: []victimSpec{vs(1)}},
				{node: "b", pdb: 0, victims: []victimSpec{vs(100), vs(100), vs(100)}},
			},
			want: "b",
		},
		// 2. lowest highest priority
		{
			name: "lowest highest-priority victim decides",
			cands: []candSpec{
				{node: "a", victims: []victimSpec{vs(5)}},
				{node: "b", victims: []victimSpec{vs(3), vs(3), vs(3)}},
			},
			want: "b",
		},
		{
			name: "lowest highest-priority victim decides, negative priorities",
			cands: []candSpec{
				{node: "a", victims: []victimSpec{vs(-1)}},
				{node: "b", victims: []victimSpec{vs(-5), vs(-5), vs(-5)}},
			},
			want: "b",
		},
		{
			name: "lowest highest-priority victim decides, MaxInt32",
			cands: []candSpec{
				{node: "a", victims: []victimSpec{vs(maxP)}},
				{node: "b", victims: []victimSpec{vs(maxP - 1), vs(maxP - 1)}},
			},
			want: "b",
		},
		{
			name: "lowest highest-priority victim decides, MinInt32",
			cands: []candSpec{
				{node: "a", victims: []victimSpec{vs(minP + 1)}},
				{node: "b", victims: []victimSpec{vs(minP), vs(minP), vs(minP)}},
			},
			want: "b",
		},
		// 3. smallest sum of shifted priorities
		{
			name: "smallest priority sum decides",
			cands: []candSpec{
				{node: "a", victims: []victimSpec{vs(10), vs(10)}},
				{node: "b", victims: []victimSpec{vs(10), vs(5)}},
			},
			want: "b",
		},
		{
			// Raw sums: a = -20 < b = 0; shifted: a = 3*2^31-20 > b = 2*2^31.
			name: "smallest priority sum decides, negative priorities are shifted",
			cands: []candSpec{
				{node: "a", victims: []victimSpec{vs(0), vs(-10), vs(-10)}},
				{node: "b", victims: []victimSpec{vs(0), vs(0)}},
			},
			want: "b",
		},
		{
			// a = 2*(2^32-1); b = (2^32-1) + 0 + 0: b wins with more victims.
			name: "smallest priority sum decides, MaxInt32 victims",
			cands: []candSpec{
				{node: "a", victims: []victimSpec{vs(maxP), vs(maxP)}},
				{node: "b", victims: []victimSpec{vs(maxP), vs(minP), vs(minP)}},
			},
			want: "b",
		},
		{
			name: "smallest priority sum decides, many MaxInt32 victims do not overflow",
			cands: []candSpec{
				{node: "a", victims: []victimSpec{vs(maxP), vs(maxP), vs(maxP), vs(maxP), vs(maxP), vs(maxP), vs(maxP), vs(maxP)}},
				{node: "b", victims: []victimSpec{vs(maxP), vs(maxP), vs(maxP), vs(maxP), vs(maxP), vs(maxP), vs(maxP), vs(maxP - 1)}},
			},
			want: "b",
		},
		// 4. fewest victims
		{
			// Shifted sums: a = 0 + 0 = 0, b = 0: tie; b has fewer victims.
			name: "one victim at MinInt32 vs two: sums tie at zero, fewest victims decides",
			cands: []candSpec{
				{node: "a", victims: []victimSpec{vs(minP), vs(minP)}},
				{node: "b", victims: []victimSpec{vs(minP)}},
			},
			want: "b",
		},
		{
			// Shifted sums: a = 2^31 + 0, b = 2^31: tie.
			name: "fewest victims decides",
			cands: []candSpec{
				{node: "a", victims: []victimSpec{vs(0), vs(minP)}},
				{node: "b", victims: []victimSpec{vs(0)}},
			},
			want: "b",
		},
		// 5. latest start time of the highest-priority victims
		{
			name: "latest earliest start time of the highest-priority victims decides",
			cands: []candSpec{
				{node: "a", victims: []victimSpec{vsAt(5, 2*time.Hour), vsAt(5, 30*time.Minute)}},
				{node: "b", victims: []victimSpec{vsAt(5, time.Hour), vsAt(5, time.Hour)}},
			},
			want: "b",
		},
		{
			// Over all victims b would win (a has a 10h-old one); over the
			// highest-priority ones a's is the most recent.
			name: "only the highest-priority victims' start times count",
			cands: []candSpec{
				{node: "a", victims: []victimSpec{vsAt(10, 5*time.Minute), vsAt(1, 10*time.Hour)}},
				{node: "b", victims: []victimSpec{vsAt(10, 30*time.Minute), vsAt(1, time.Minute)}},
			},
			want: "a",
		},
		{
			name: "a victim without start time counts as Now",
			cands: []candSpec{
				{node: "a", victims: []victimSpec{vsAt(5, time.Minute)}},
				{node: "b", victims: []victimSpec{{prio: 5, noStart: true}}},
			},
			want: "b",
		},
		{
			name: "a start time after Now beats a victim without start time",
			cands: []candSpec{
				{node: "a", victims: []victimSpec{{prio: 5, noStart: true}}},
				{node: "b", victims: []victimSpec{vsAt(5, -time.Minute)}},
			},
			want: "b",
		},
		// 6. list order
		{
			name: "final tie: first in list order",
			cands: []candSpec{
				{node: "b", victims: []victimSpec{vs(5), vs(1)}},
				{node: "a", victims: []victimSpec{vs(5), vs(1)}},
			},
			want: "b",
		},
		{
			name: "final tie: first in list order, reversed",
			cands: []candSpec{
				{node: "a", victims: []victimSpec{vs(5), vs(1)}},
				{node: "b", victims: []victimSpec{vs(5), vs(1)}},
			},
			want: "a",
		},
		{
			name: "final tie among the survivors of earlier criteria",
			cands: []candSpec{
				{node: "x", pdb: 1, victims: []victimSpec{vs(0)}},
				{node: "c", victims: []victimSpec{vs(5), vs(1)}},
				{node: "y", victims: []victimSpec{vs(6)}},
				{node: "a", victims: []victimSpec{vs(5), vs(1)}},
			},
			want: "c",
		},
		// criteria order
		{
			name: "PDB violations come before priorities",
			cands: []candSpec{
				{node: "a", pdb: 2, victims: []victimSpec{vs(minP)}},
				{node: "b", pdb: 1, victims: []victimSpec{vs(maxP), vs(maxP)}},
			},
			want: "b",
		},
		{
			name: "victim count comes before start time",
			cands: []candSpec{
				{node: "a", victims: []victimSpec{vsAt(minP, 10*time.Hour)}},
				{node: "b", victims: []victimSpec{vsAt(minP, -time.Hour), vsAt(minP, -time.Hour)}},
			},
			want: "a",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, cands := buildPick(tt.cands)
			ev := newEvaluator(t, impl, c)
			got := ev.SelectCandidate(cands, newRequest(pod("default", "p", math.MaxInt32).Obj(), nil))
			gotNode := ""
			if got != nil {
				gotNode = got.Node
				// The pick is one of the candidates, unchanged.
				var orig *preempt.Candidate
				for i := range cands {
					if cands[i].Node == got.Node {
						orig = &cands[i]
					}
				}
				if diff := cmp.Diff(orig, got); diff != "" {
					t.Errorf("picked candidate differs from the input one (-input +picked):\n%s", diff)
				}
			}
			if tieAllowed(t, impl, c, cands, newRequest(pod("default", "p", math.MaxInt32).Obj(), nil), tt.want, gotNode) {
				return
			}
			if diff := cmp.Diff(tt.want, gotNode); diff != "" {
				t.Errorf("SelectCandidate (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSelectCandidateClock: the start time of a victim without one is
// Request.Now, so moving Now flips the latest-start-time criterion.
func testSelectCandidateClock(t *testing.T, impl preempt.Implementation) {
	c, cands := buildPick([]candSpec{
		{node: "a", victims: []victimSpec{{prio: 5, noStart: true}}},
		{node: "b", victims: []victimSpec{vsAt(5, 0)}}, // started at now
	})
	ev := newEvaluator(t, impl, c)
	for _, tt := range []struct {
		now  time.Time
		want string
	}{
		{now.Add(time.Second), "a"},
		{now, "a"}, // tie: list order
		{now.Add(-time.Second), "b"},
	} {
		r := newRequest(pod("default", "p", 10).Obj(), nil)
		r.Now = tt.now
		got := ev.SelectCandidate(cands, r)
		if tieAllowed(t, impl, c, cands, r, tt.want, got.Node) {
			continue
		}
		if diff := cmp.Diff(tt.want, got.Node); diff != "" {
			t.Errorf("Now=%v: SelectCandidate (-want +got):\n%s", tt.now, diff)
		}
	}
}

// answerOrderAllowed reports whether impl reads an extender's answer in
// map order (upstream) and got's error names another bad node of it than
// want's (agreement.ExtenderAnswerOrder).
func answerOrderAllowed(impl preempt.Implementation, c *preempt.Cluster, want, got preempt.Decision) bool {
	if !agreement.TieIsRandom(impl) {
		return false
	}
	_, ok := agreement.ExtenderAnswerOrder(c, want, got)
	return ok
}

// tieAllowed reports whether impl breaks the final tie at random (upstream)
// and both want and got are among the candidates the reference ranks
// equal-best: then either answer is upstream's.
func tieAllowed(t TB, impl preempt.Implementation, c *preempt.Cluster, cands []preempt.Candidate, req *preempt.Request, want, got string) bool {
	t.Helper()
	if !agreement.TieIsRandom(impl) {
		return false
	}
	ref, err := reference.Impl{}.NewEvaluator(c)
	if err != nil {
		t.Fatalf("reference: %v", err)
	}
	cands, err = agreement.Selectable(context.Background(), c, req, cands)
	if err != nil {
		t.Fatalf("%v", err)
	}
	ties := agreement.EqualBest(ref, cands, req)
	return slices.Contains(ties, want) && slices.Contains(ties, got)
}
