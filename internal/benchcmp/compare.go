package benchcmp

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"

	"golang.org/x/perf/benchmath"
	"golang.org/x/perf/benchunit"
)

// Defaults of the statistics.
const (
	DefaultAlpha      = 0.05
	DefaultConfidence = 0.95
)

// Summary is a sample's median and the confidence interval of the median.
type Summary struct {
	Center float64 `json:"center"`
	Lo     float64 `json:"lo"`
	Hi     float64 `json:"hi"`
	// RangePct is the half-width of the interval in percent of the center,
	// as benchstat prints it ("3%"; "∞" when there are too few samples).
	RangePct string    `json:"range"`
	N        int       `json:"n"`
	Values   []float64 `json:"values"`
	Warnings []string  `json:"warnings,omitempty"`
}

// finite is v, or nil (JSON null) when v is infinite or NaN, which JSON
// cannot hold.
func finite(v float64) *float64 {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return nil
	}
	return &v
}

// MarshalJSON writes an infinite bound (too few samples) as null.
func (s Summary) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Center   *float64  `json:"center"`
		Lo       *float64  `json:"lo"`
		Hi       *float64  `json:"hi"`
		RangePct string    `json:"range"`
		N        int       `json:"n"`
		Values   []float64 `json:"values"`
		Warnings []string  `json:"warnings,omitempty"`
	}{finite(s.Center), finite(s.Lo), finite(s.Hi), s.RangePct, s.N, s.Values, s.Warnings})
}

// Summarize is benchmath.AssumeNothing's summary of values at confidence.
func Summarize(values []float64, confidence float64) Summary {
	vs := slices.Clone(values)
	s := benchmath.NewSample(vs, &benchmath.DefaultThresholds)
	sum := benchmath.AssumeNothing.Summary(s, confidence)
	out := Summary{Center: sum.Center, Lo: sum.Lo, Hi: sum.Hi, RangePct: sum.PctRangeString(), N: len(vs), Values: vs}
	for _, w := range sum.Warnings {
		out.Warnings = append(out.Warnings, w.Error())
	}
	return out
}

// Comparison is the comparison of a new sample with a base sample.
type Comparison struct {
	// Ratio is new center / base center (1 when both are 0, +Inf when only
	// the base is 0).
	Ratio float64 `json:"ratio"`
	// P is the p-value that the samples come from the same distribution.
	P float64 `json:"p"`
	// N1 and N2 are the sizes of the base and the new sample.
	N1 int `json:"nBase"`
	N2 int `json:"nNew"`
	// Exact is set when neither sample varies (see Compare).
	Exact       bool     `json:"exact,omitempty"`
	Significant bool     `json:"significant"`
	Warnings    []string `json:"warnings,omitempty"`
}

// Compare compares sample new with sample base at alpha.
//
// Significance is the Mann-Whitney U test's p < alpha, with one rule added
// for samples without variance, which allocs/op (and often B/op) nearly
// always are: when every value of base is the same and every value of new
// is the same, the difference is exact. Equal constants are no change
// (p = 1); different constants are a significant change whatever alpha,
// provided the samples are large enough to show that they do not vary:
// as large as the U test needs to tell them apart at DefaultAlpha (p is
// still the U test's, its smallest possible value for these sizes; 4 and
// 4 samples, 3 and 5). One sample a side shows nothing: it is "~", as
// benchstat prints it, whatever the values. A sample that varies on
// either side is left to the U test.
func Compare(base, new []float64, alpha float64) Comparison {
	b := Summarize(base, DefaultConfidence)
	n := Summarize(new, DefaultConfidence)
	c := Comparison{Ratio: ratio(n.Center, b.Center), N1: len(base), N2: len(new)}
	if len(base) == 0 || len(new) == 0 {
		c.P = 1
		c.Warnings = append(c.Warnings, "no samples to compare")
		return c
	}
	if constant(base) && constant(new) {
		c.Exact = true
		if base[0] == new[0] {
			c.P = 1
			return c
		}
	}
	th := benchmath.Thresholds{CompareAlpha: alpha}
	cmp := benchmath.AssumeNothing.Compare(benchmath.NewSample(slices.Clone(base), &th), benchmath.NewSample(slices.Clone(new), &th))
	c.P = cmp.P
	c.Significant = cmp.P < alpha || c.Exact && cmp.P < max(alpha, DefaultAlpha)
	if !c.Significant {
		// "need >= 4 samples to detect a difference at alpha level 0.05"
		for _, w := range cmp.Warnings {
			c.Warnings = append(c.Warnings, w.Error())
		}
	}
	return c
}

func constant(vs []float64) bool {
	for _, v := range vs {
		if v != vs[0] {
			return false
		}
	}
	return true
}

func ratio(new, base float64) float64 {
	switch {
	case new == base:
		return 1
	case base == 0:
		return math.Inf(1)
	}
	return new / base
}

// MarshalJSON writes an infinite ratio (a base of 0) as null.
func (c Comparison) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Ratio       *float64 `json:"ratio"`
		P           float64  `json:"p"`
		N1          int      `json:"nBase"`
		N2          int      `json:"nNew"`
		Exact       bool     `json:"exact,omitempty"`
		Significant bool     `json:"significant"`
		Warnings    []string `json:"warnings,omitempty"`
	}{finite(c.Ratio), c.P, c.N1, c.N2, c.Exact, c.Significant, c.Warnings})
}

// ChangePct is the change of the center in percent (+10 is 10% more).
func (c Comparison) ChangePct() float64 { return (c.Ratio - 1) * 100 }

// FormatRatio prints a ratio with two decimals ("2.12x", "0.52x"), three
// significant digits below 0.1 ("0.0235x"), four decimals near 1
// ("0.9983x"), "?" when it is infinite.
func FormatRatio(r float64) string {
	switch {
	case math.IsInf(r, 0) || math.IsNaN(r):
		return "?"
	case r != 1 && r > 0.995 && r < 1.005:
		// Close to 1 but not 1 (an exact change of one alloc in 600):
		// show enough digits not to print "1.00x".
		return strconv.FormatFloat(r, 'f', 4, 64) + "x"
	case r >= 0.1:
		return strconv.FormatFloat(r, 'f', 2, 64) + "x"
	}
	return strconv.FormatFloat(r, 'g', 3, 64) + "x"
}

// FormatP prints a p-value with the sample sizes: "p=0.002 n=6",
// "p=0.004 n=6+5".
func (c Comparison) FormatP() string {
	n := fmt.Sprintf("n=%d", c.N1)
	if c.N1 != c.N2 {
		n = fmt.Sprintf("n=%d+%d", c.N1, c.N2)
	}
	return fmt.Sprintf("p=%.3f %s", c.P, n)
}

// FormatPct prints a change in percent: "+27.31%", "-3.00%", and two
// significant digits below 0.01% ("+0.0039%", one allocation in 25000).
func FormatPct(pct float64) string {
	switch {
	case math.IsInf(pct, 0) || math.IsNaN(pct):
		return "?"
	case pct != 0 && math.Abs(pct) < 0.01:
		return fmt.Sprintf("%+.2g%%", pct)
	}
	return fmt.Sprintf("%+.2f%%", pct)
}

// FormatValue scales v for unit with an SI or binary prefix and three
// significant digits: 0.0313 sec/op is "31.3m", 1536 B/op "1.50Ki".
func FormatValue(v float64, unit string) string {
	return benchunit.Scale(v, benchunit.ClassOf(unit))
}

// FormatSummary prints "31.3m ± 2%".
func FormatSummary(s Summary, unit string) string {
	return FormatValue(s.Center, unit) + " ± " + s.RangePct
}

// unitOrder puts the testing package's units first.
func unitOrder(units []string) []string {
	out := make([]string, 0, len(units))
	for _, u := range []string{"sec/op", "B/op", "allocs/op"} {
		if slices.Contains(units, u) {
			out = append(out, u)
		}
	}
	for _, u := range units {
		if !slices.Contains(out, u) {
			out = append(out, u)
		}
	}
	return out
}
