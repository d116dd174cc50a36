package releases

import (
	"io"
	"os"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/wire"
)

// Impl is a Release as a preempt.Implementation: its binary, built on
// first use, served as a child process (wire.Command). Its answers are
// upstream's at the release, with pickOneNodeForPreemption's final tie
// broken in list order (the child's default), so they are a function of
// the problem; a tree's (upstream@DIR) break it by map order, as upstream
// does (RandomFinalTie), so that its own node pick runs.
type Impl struct {
	rel      Release
	timeout  time.Duration
	progress io.Writer
	label    string // Name, when set (Labelled)

	mu     sync.Mutex
	client *wire.Client
	err    error // the build's, kept: a failed build is not retried
}

var (
	_ preempt.Implementation = (*Impl)(nil)
	_ preempt.Limited        = (*Impl)(nil)
)

// New returns r's implementation, whose child may take timeout to answer
// each call (wire.DefaultTimeout when 0), and which notes its build on
// progress (nil: os.Stderr).
func New(r Release, timeout time.Duration, progress io.Writer) *Impl {
	if progress == nil {
		progress = os.Stderr
	}
	return &Impl{rel: r, timeout: timeout, progress: progress}
}

// Name is the release's, "upstream@VERSION" or "upstream@DIR", without
// building it, unless Labelled gave it another.
func (i *Impl) Name() string {
	if i.label != "" {
		return i.label
	}
	return i.rel.Name()
}

// Labelled returns a new Impl of the same release (its own child) named
// label: a benchmark's name level cannot hold a tree's path.
func (i *Impl) Labelled(label string) *Impl {
	return &Impl{rel: i.rel, timeout: i.timeout, progress: i.progress, label: label}
}

// Release is the release i runs.
func (i *Impl) Release() Release { return i.rel }

// Client builds the release if need be and returns its wire client. Its
// errors, as NewEvaluator's, do not name the release: the caller names
// the implementation, as it names every other ("upstream@v1.36.3:
// upstream@v1.36.3: ..." otherwise).
func (i *Impl) Client() (*wire.Client, error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.client != nil || i.err != nil {
		return i.client, i.err
	}
	bin, err := i.rel.binary(i.progress)
	if err != nil {
		i.err = err
		return nil, err
	}
	args := []string{bin}
	if i.rel.Tree != nil {
		// A tree runs its own pickOneNodeForPreemption, final tie and
		// all: ListOrderTie would restate the five criteria (the
		// adapter's copy of them), and a tree's change of them would not
		// show.
		args = append(args, "-random-final-tie")
	}
	i.client = wire.Command(i.timeout, args...)
	return i.client, nil
}

var _ interface{ RandomFinalTie() bool } = (*Impl)(nil)

// RandomFinalTie: a tree (upstream@DIR) breaks pickOneNodeForPreemption's
// final tie by map order, as upstream does; a release's child in list
// order (its default).
func (i *Impl) RandomFinalTie() bool { return i.rel.Tree != nil }

// NewEvaluator builds the release on first use, then prepares c in its
// child.
func (i *Impl) NewEvaluator(c *preempt.Cluster) (preempt.Evaluator, error) {
	cl, err := i.Client()
	if err != nil {
		return nil, err
	}
	return cl.NewEvaluator(c)
}

// Unmodelled is the child's (nil when it cannot be built: NewEvaluator
// says why).
func (i *Impl) Unmodelled(c *preempt.Cluster, pod *v1.Pod) *preempt.Unmodelled {
	cl, err := i.Client()
	if err != nil {
		return nil
	}
	return cl.Unmodelled(c, pod)
}

// Close stops the child, if any.
func (i *Impl) Close() error {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.client != nil {
		return i.client.Close()
	}
	return nil
}

var _ preempt.ReleaseFixed = (*Impl)(nil)

// UpstreamRelease is the release's version: its child runs that
// release's code.
func (i *Impl) UpstreamRelease() string { return i.rel.Version }

var _ preempt.GateUseLimited = (*Impl)(nil)

// UnmodelledGateUse refuses a configuration setting a feature gate the
// release does not have (Release.UnknownGates), and pod groups under
// GenericWorkload=true: the contract's pod groups are v1.37's API
// (spec.schedulingGroup, scheduling.k8s.io/v1beta1), which an earlier
// release's k8s.io/api drops on decoding, so its child would answer as if
// every pod were a plain one (found by releases.TestCrossRelease).
func (i *Impl) UnmodelledGateUse(c *preempt.Cluster, pod *v1.Pod, cfg preempt.Config) *preempt.Unmodelled {
	if u := preempt.PodGroupGaps(c, pod, cfg); u != nil {
		u.Detail += "; " + i.rel.Version + "'s API has no spec.schedulingGroup"
		return u
	}
	for _, g := range i.rel.UnknownGates {
		if _, ok := cfg.FeatureGates[g]; ok {
			return &preempt.Unmodelled{Feature: "feature gate " + g, Object: "the configuration",
				Detail: "sets a gate " + i.rel.Version + " does not have"}
		}
	}
	return nil
}
