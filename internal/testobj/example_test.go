package testobj_test

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/preemptbench/preemptbench/internal/testobj"
)

// A node of 2 cpu, a victim bound to it an hour before the epoch, and a
// pending preemptor of a pod group; a budget covering the victim.
func Example() {
	node := testobj.MakeNode().Name("n1").Hostname().
		Allocatable(map[v1.ResourceName]string{v1.ResourceCPU: "2", v1.ResourcePods: "110"}).Obj()
	victim := testobj.MakePod().Namespace("default").Name("v").UID("uid-v").Label("app", "a").
		Priority(0).Container("c").CPU("2").Bound("n1", testobj.Epoch.Add(-time.Hour)).Obj()
	preemptor := testobj.MakePod().Namespace("default").Name("p").UID("uid-p").
		Priority(10).PodGroupName("g").Container("c").CPU("1").Bound("", testobj.Epoch).Obj()
	pdb := testobj.MakePDB().Namespace("default").Name("pdb").MatchLabel("app", "a").DisruptionsAllowed(1).Obj()
	group := testobj.MakePodGroup().Namespace("default").Name("g").Priority(10).MinCount(1).Obj()

	alloc := node.Status.Allocatable[v1.ResourceCPU]
	fmt.Println(node.Name, node.Labels[v1.LabelHostname], alloc.String())
	fmt.Println(victim.Spec.NodeName, victim.Status.StartTime.UTC().Format(time.RFC3339))
	fmt.Println(preemptor.Spec.NodeName == "", preemptor.Status.StartTime == nil, *preemptor.Spec.SchedulingGroup.PodGroupName)
	fmt.Println(pdb.Spec.Selector.MatchLabels, pdb.Status.DisruptionsAllowed)
	fmt.Println(group.Spec.SchedulingPolicy.Gang.MinCount, group.Spec.DisruptionMode == nil)
	// Output:
	// n1 n1 2
	// n1 2025-12-31T23:00:00Z
	// true true g
	// map[app:a] 1
	// 1 true
}
