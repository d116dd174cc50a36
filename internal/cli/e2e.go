package cli

import (
	"bytes"
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/preemptbench/preemptbench/internal/benchcmp"
	"github.com/preemptbench/preemptbench/internal/e2e"
	"github.com/preemptbench/preemptbench/internal/procgroup"
)

// e2eOptions are compare e2e's flags, checked.
type e2eOptions struct {
	workloads []string // scheduler_perf test cases, or TESTCASE/WORKLOAD
	nodes     int
	impls     []string
	count     int
	raw       string
	profiles  string // -cpuprofile DIR
	markdown  bool
}

func parseE2E(args []string, stderr io.Writer) (e2eOptions, error) {
	fs := flag.NewFlagSet("e2e", flag.ContinueOnError)
	fs.SetOutput(stderr)
	workload := fs.String("workload", "PreemptionBasic", "scheduler_perf test cases of default_preemption and workload_preemption (`W[,W...]`), or TESTCASE/WORKLOAD for one workload")
	nodes := fs.Int("nodes", 500, "the size: every workload of the test cases named NNodes or NNodes_* (5 and 1000 for PreemptionBasic, 500 and 5000 for PreemptionAsync, 2 and 100 for the gang ones)")
	impl := fs.String("impl", e2e.Stock+",optimized", "the preemptions, interleaved round by round: "+e2e.Stock+" (the stock DefaultPreemption) and implementations plugged as the PostFilter")
	count := fs.Int("count", 6, "rounds")
	raw := fs.String("raw", "", "keep the results in `FILE` (Go benchmark format, impl=NAME in each name, pods/s and ms units)")
	profiles := fs.String("cpuprofile", "", "write each run's CPU profile (scheduler_perf's -perf-cpuprofile) into `DIR`")
	output := fs.String("o", "text", "output: text or markdown")
	if err := fs.Parse(args); err != nil {
		return e2eOptions{}, parseError(err)
	}
	opts := e2eOptions{nodes: *nodes, count: *count, raw: *raw, profiles: *profiles, markdown: *output == "markdown"}
	switch {
	case fs.NArg() > 0:
		return opts, badf("unexpected arguments %q", fs.Args())
	case *output != "text" && *output != "markdown":
		return opts, badf("-o must be text or markdown, not %q", *output)
	case *count < 1 || *count > 100:
		return opts, badf("-count %d: want 1 to 100", *count)
	case *nodes < 1:
		return opts, badf("-nodes %d: want a positive node count", *nodes)
	}
	// Before the runs, not after them.
	if err := checkOutputFile("-raw", *raw); err != nil {
		return opts, err
	}
	if err := checkOutputDir("-cpuprofile", *profiles); err != nil {
		return opts, err
	}
	for _, w := range strings.Split(*workload, ",") {
		if w = strings.TrimSpace(w); w != "" {
			opts.workloads = append(opts.workloads, w)
		}
	}
	for _, i := range strings.Split(*impl, ",") {
		i = strings.TrimSpace(i)
		if i == "" {
			continue
		}
		if _, err := e2e.Registry(i); err != nil {
			return opts, badf("-impl %s: %v", i, err)
		}
		if slices.Contains(opts.impls, i) {
			return opts, badf("-impl names %s twice", i)
		}
		opts.impls = append(opts.impls, i)
	}
	if len(opts.workloads) == 0 || len(opts.impls) == 0 {
		return opts, badf("-workload and -impl name at least one each")
	}
	return opts, nil
}

// e2eRun is one scheduler_perf workload: its suite, test case and name.
type e2eRun struct{ suite, testCase, workload string }

func (r e2eRun) name(impl string) string {
	return fmt.Sprintf("E2E/workload=%s/run=%s/impl=%s", r.testCase, r.workload, impl)
}

// e2eWorkloads finds the workloads opts names in the suites' configs.
func e2eWorkloads(perfDir string, opts e2eOptions) ([]e2eRun, error) {
	type testCase struct {
		Name      string `json:"name"`
		Workloads []struct {
			Name string `json:"name"`
		} `json:"workloads"`
	}
	cases := map[string]struct {
		suite     string
		workloads []string
	}{}
	var known []string
	for _, suite := range slices.Sorted(maps.Keys(e2e.Suites)) {
		data, err := os.ReadFile(filepath.Join(perfDir, suite, e2e.ConfigFile))
		if err != nil {
			return nil, err
		}
		var tcs []testCase
		if err := yaml.Unmarshal(data, &tcs); err != nil {
			return nil, fmt.Errorf("%s/%s: %v", suite, e2e.ConfigFile, err)
		}
		for _, tc := range tcs {
			var ws []string
			for _, w := range tc.Workloads {
				ws = append(ws, w.Name)
			}
			cases[tc.Name] = struct {
				suite     string
				workloads []string
			}{suite, ws}
			known = append(known, tc.Name)
		}
	}
	var out []e2eRun
	prefix := strconv.Itoa(opts.nodes) + "Nodes"
	for _, w := range opts.workloads {
		name, only, one := strings.Cut(w, "/")
		tc, ok := cases[name]
		if !ok {
			return nil, badf("-workload %s: no such scheduler_perf test case (known: %s)", name, strings.Join(known, ", "))
		}
		n := len(out)
		for _, wl := range tc.workloads {
			if (one && wl == only) || (!one && (wl == prefix || strings.HasPrefix(wl, prefix+"_"))) {
				out = append(out, e2eRun{tc.suite, name, wl})
			}
		}
		if len(out) == n {
			return nil, badf("-workload %s: no workload %s of %s (it has %s)", w, cmp.Or(only, prefix+"[_...]"), name, strings.Join(tc.workloads, ", "))
		}
	}
	return out, nil
}

// e2eUnits renames scheduler_perf's metrics to the units compare e2e
// reports; the others are dropped.
var e2eUnits = map[string]string{
	"SchedulingThroughput/Average":                     "pods/s",
	"scheduler_scheduling_attempt_duration_ms/Perc50":  "attempt-p50-ms",
	"scheduler_scheduling_attempt_duration_ms/Perc90":  "attempt-p90-ms",
	"scheduler_scheduling_attempt_duration_ms/Perc99":  "attempt-p99-ms",
	"scheduler_scheduling_attempt_duration_ms/Average": "attempt-avg-ms",
	"SchedulingDuration/Duration":                      "scheduling-s",
}

var perfResultLine = regexp.MustCompile(`^BenchmarkPerfScheduling/(\S+?)(-\d+)?\s+(\d+)\s+(.*)$`)

// e2eResult turns scheduler_perf's result line for r in out into one in
// the project's naming, the units of e2eUnits.
func e2eResult(out []byte, r e2eRun, impl string) (string, error) {
	for _, line := range strings.Split(string(out), "\n") {
		m := perfResultLine.FindStringSubmatch(line)
		if m == nil || m[1] != r.testCase+"/"+r.workload {
			continue
		}
		f := strings.Fields(m[4])
		var b strings.Builder
		fmt.Fprintf(&b, "Benchmark%s %s", r.name(impl), m[3])
		n := 0
		for i := 0; i+1 < len(f); i += 2 {
			if unit, ok := e2eUnits[f[i+1]]; ok {
				fmt.Fprintf(&b, " %s %s", f[i], unit)
				n++
			}
		}
		if n == 0 {
			return "", fmt.Errorf("%s: scheduler_perf reported none of the measured metrics:\n%s", r.name(impl), line)
		}
		return b.String() + "\n", nil
	}
	return "", fmt.Errorf("%s: scheduler_perf printed no result:\n%s", r.name(impl), tail(out, 40))
}

func tail(b []byte, lines int) string {
	s := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(s) > lines {
		s = s[len(s)-lines:]
	}
	return strings.Join(s, "\n")
}

func runE2E(args []string, stdout, stderr io.Writer) int {
	opts, err := parseE2E(args, stderr)
	if err == nil {
		var rep *benchcmp.Report
		if rep, err = runE2EJob(opts, stderr); err == nil {
			if opts.markdown {
				err = rep.WriteMarkdown(stdout)
			} else {
				err = rep.WriteText(stdout)
			}
			if err == nil {
				return ExitOK
			}
		}
	}
	return exitFor("e2e", err, stderr)
}

// exitFor reports err of command cmd and returns its exit code.
func exitFor(cmd string, err error, stderr io.Writer) int {
	if err == flag.ErrHelp {
		return ExitOK
	}
	if err.Error() != "" {
		fmt.Fprintf(stderr, "compare %s: %v\n", cmd, err)
	}
	return ExitBadInput
}

func runE2EJob(opts e2eOptions, stderr io.Writer) (*benchcmp.Report, error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	root, err := moduleRoot()
	if err != nil {
		return nil, err
	}
	perfDir, err := e2e.SchedulerPerfDir(root)
	if err != nil {
		return nil, err
	}
	runs, err := e2eWorkloads(perfDir, opts)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "preemptbench-e2e-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	start := time.Now()
	bin, binDir := filepath.Join(tmp, "e2e.test"), filepath.Join(tmp, "bin")
	fmt.Fprintf(stderr, "compare e2e: building scheduler_perf's benchmark (go test -c ./internal/e2e) and etcd (./internal/e2e/etcd)\n")
	for _, c := range [][]string{{"test", "-c", "-o", bin, "./internal/e2e"}, {"build", "-o", filepath.Join(binDir, "etcd"), "./internal/e2e/etcd"}} {
		cmd := exec.CommandContext(ctx, "go", c...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go %s: %v\n%s", strings.Join(c, " "), err, out)
		}
	}
	// One working directory an implementation and suite: the suite's
	// configuration and templates, its scheduler configuration.
	work := map[[2]string]string{}
	for _, impl := range opts.impls {
		cfg, err := e2e.SchedulerConfig(impl)
		if err != nil {
			return nil, err
		}
		for _, r := range runs {
			key := [2]string{impl, r.suite}
			if _, ok := work[key]; ok {
				continue
			}
			dir, err := e2e.Prepare(filepath.Join(tmp, impl, r.suite), perfDir, r.suite, cfg)
			if err != nil {
				return nil, err
			}
			work[key] = dir
		}
	}
	env := append(os.Environ(), "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	total := opts.count * len(runs) * len(opts.impls)
	fmt.Fprintf(stderr, "compare e2e: built in %s; %d runs: %d rounds of %d workloads x %d implementations, interleaved\n",
		time.Since(start).Round(time.Second), total, opts.count, len(runs), len(opts.impls))
	var results bytes.Buffer
	i := 0
	for round := 1; round <= opts.count; round++ {
		for _, r := range runs {
			for _, impl := range opts.impls {
				i++
				fmt.Fprintf(stderr, "[%d/%d %s] %s, round %d/%d\n", i, total, time.Since(start).Round(time.Second), r.name(impl), round, opts.count)
				data := filepath.Join(tmp, "data")
				if opts.profiles != "" {
					if data, err = filepath.Abs(filepath.Join(opts.profiles, fmt.Sprintf("%s_%s_%s_round%d", r.testCase, r.workload, impl, round))); err != nil {
						return nil, err
					}
				}
				args := []string{"-test.run", "^$", "-test.bench", "^BenchmarkPerfScheduling/" + regexp.QuoteMeta(r.testCase) + "/" + regexp.QuoteMeta(r.workload) + "$",
					"-test.benchtime", "1x", "-perf-scheduling-label-filter=", "-e2e.impl", impl, "-data-items-dir", data}
				if opts.profiles != "" {
					args = append(args, "-perf-cpuprofile")
				}
				cmd := exec.CommandContext(ctx, bin, args...)
				cmd.Dir, cmd.Env = work[[2]string{impl, r.suite}], env
				procgroup.Own(cmd) // a stop kills the etcd scheduler_perf starts too
				out, err := cmd.CombinedOutput()
				if err != nil {
					return nil, fmt.Errorf("%s: %v\n%s", r.name(impl), err, tail(out, 60))
				}
				line, err := e2eResult(out, r, impl)
				if err != nil {
					return nil, err
				}
				results.WriteString(line)
			}
		}
	}
	fmt.Fprintf(stderr, "compare e2e: %d runs done in %s\n", total, time.Since(start).Round(time.Second))
	if err := writeRaw(opts.raw, results.Bytes(), stderr); err != nil {
		return nil, err
	}
	rs, err := benchcmp.Read(bytes.NewReader(results.Bytes()), "e2e")
	if err != nil {
		return nil, err
	}
	so := benchcmp.DefaultStatOptions()
	so.Baselines = []string{e2e.Stock}
	return benchcmp.Stat(rs, so)
}
