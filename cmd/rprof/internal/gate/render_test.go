package gate

import (
	"bytes"
	"encoding/xml"
	"errors"
	"strings"
	"testing"

	"github.com/rprof/rprof/internal/testutil"
	"github.com/rprof/rprof/roofline"

	"github.com/rprof/rprof/internal/unit"
)

// exactLimits fail on any growth of W or Q, as for emulated counts.
var exactLimits = Limits{MaxSlowdown: 0.5, MaxWorkGrowth: 0, MaxTrafficGrowth: 0}

// verdicts are the cases the renderers are checked on.
func verdicts(t *testing.T) map[string]*Verdict {
	t.Helper()
	tight := DefaultLimits
	tight.MaxSlowdown = 0.01
	failed := load(t, "slowdown-new")
	failed.Exit = roofline.Exit{Code: 2}
	base := placed(load(t, "slowdown-old"), 4e7, 3.2e8, 50)
	slowerMachine := placed(withCPU(scaled(load(t, "slowdown-old"), 1/0.8), "Other CPU"), 4e7, 3.2e8, 40)
	slowerMachine.Flags = []roofline.Flag{{Code: roofline.FlagVM, Message: "measured in a virtual machine"}}
	cases := []struct {
		name     string
		old, new roofline.Point
		limits   Limits
	}{
		{"regression", load(t, "slowdown-old"), load(t, "slowdown-new"), tight},
		{"noise", load(t, "noise-old"), load(t, "noise-new"), tight},
		{"changed-roof", base, slowerMachine, DefaultLimits},
		{"failed-command", load(t, "slowdown-old"), failed, DefaultLimits},
		// The same machine under roofs measured again, 20% lower: the kernel
		// took 25% longer at the same fraction.
		{"roofs-remeasured", base, placed(scaled(load(t, "slowdown-old"), 1/0.8), 4e7, 3.2e8, 40), DefaultLimits},
		// Recorded emulated runs of a program whose threads take chunks of
		// an array in turn, gated with no growth of W and Q allowed: on one
		// thread both repeat exactly; on two, Q moved by 18%.
		{"emulated-one-thread", load(t, "emulated-1thread-a"), load(t, "emulated-1thread-b"), exactLimits},
		{"emulated-two-threads", load(t, "emulated-2threads-b"), load(t, "emulated-2threads-a"), exactLimits},
	}
	out := map[string]*Verdict{}
	for _, c := range cases {
		v, err := Decide(c.old, c.new, c.limits, DefaultOptions)
		if err != nil {
			t.Fatal(err)
		}
		out[c.name] = v
	}
	return out
}

func TestRenderersMatchGoldenFiles(t *testing.T) {
	renderers := []struct {
		ext    string
		render func(*bytes.Buffer, *Verdict) error
	}{
		{"txt", func(b *bytes.Buffer, v *Verdict) error { return WriteVerdictText(b, v) }},
		{"md", func(b *bytes.Buffer, v *Verdict) error { return WriteMarkdown(b, v) }},
		{"xml", func(b *bytes.Buffer, v *Verdict) error { return WriteJUnit(b, v) }},
		{"annotations", func(b *bytes.Buffer, v *Verdict) error { return WriteAnnotations(b, v) }},
	}
	for name, v := range verdicts(t) {
		for _, r := range renderers {
			t.Run(name+"."+r.ext, func(t *testing.T) {
				var b bytes.Buffer
				if err := r.render(&b, v); err != nil {
					t.Fatal(err)
				}
				testutil.Golden(t, "testdata/golden/"+name+"."+r.ext, b.Bytes())
			})
		}
	}
}

func TestJUnitIsWellFormedAndCountsChecks(t *testing.T) {
	v := verdicts(t)["changed-roof"]
	var b bytes.Buffer
	if err := WriteJUnit(&b, v); err != nil {
		t.Fatal(err)
	}
	var doc junitSuites
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("not XML: %v", err)
	}
	if doc.Tests != len(v.Checks) || doc.Skipped != 1 || doc.Failures != 0 {
		t.Errorf("tests=%d skipped=%d failures=%d, want %d, 1, 0", doc.Tests, doc.Skipped, doc.Failures, len(v.Checks))
	}
}

func TestAnnotationsEscapeWorkflowCommands(t *testing.T) {
	v := &Verdict{Label: "a,b:c", Outcome: Regression, Reason: "100% slower\nsecond line"}
	var b bytes.Buffer
	if err := WriteAnnotations(&b, v); err != nil {
		t.Fatal(err)
	}
	want := "::error title=rprof gate a%2Cb%3Ac::100%25 slower%0Asecond line\n"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

func TestCompareTextAndMarkdownMatchGoldenFiles(t *testing.T) {
	slowOld, slowNew := load(t, "slowdown-old"), load(t, "slowdown-new")
	noiseOld, noiseNew := load(t, "noise-old"), load(t, "noise-new")
	noiseOld.Label, noiseNew.Label = "spin-noise", "spin-noise"
	placedOld := placed(slowOld, 4e7, 3.2e8, 50)
	placedNew := placed(slowNew, 4.2e7, 3.2e8, 50)
	placedOld.Label, placedNew.Label = "placed", "placed"
	// The old point kept only its mean and interval.
	placedOld.Samples = roofline.Samples{}
	placedNew.Flags = []roofline.Flag{{Code: roofline.FlagAboveRoof, Message: "above its roof"}}
	c, err := Compare([]roofline.Point{slowOld, noiseOld, placedOld}, []roofline.Point{placedNew, noiseNew, slowNew}, DefaultOptions)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteText(&b, c); err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, "testdata/golden/compare.txt", b.Bytes())
	b.Reset()
	if err := WriteComparisonMarkdown(&b, c); err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, "testdata/golden/compare.md", b.Bytes())
}

func TestCompareRefusesLabelsThatDoNotPair(t *testing.T) {
	a, b := load(t, "slowdown-old"), load(t, "noise-old")
	b.Label = "other"
	tests := []struct {
		name     string
		old, new []roofline.Point
		want     string
	}{
		{"missing label", []roofline.Point{a, b}, []roofline.Point{a}, `only in old: "other"`},
		{"duplicate label", []roofline.Point{a, a}, []roofline.Point{a, b}, `"spin" appears twice`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Compare(tt.old, tt.new, DefaultOptions)
			if !errors.Is(err, ErrLabels) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want ErrLabels saying %s", err, tt.want)
			}
		})
	}
}

func TestCompareTwoSinglePointsWhateverTheirLabels(t *testing.T) {
	a, b := load(t, "slowdown-old"), load(t, "slowdown-new")
	b.Label = "spin-v2"
	c, err := Compare([]roofline.Point{a}, []roofline.Point{b}, DefaultOptions)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Pairs[0].Label; got != "spin → spin-v2" {
		t.Errorf("label %q", got)
	}
}

func TestBenchfmt(t *testing.T) {
	p := load(t, "noise-old")
	analytic := p
	analytic.Source, analytic.WorkFlops = "analytic", ptr(4e7)
	var b bytes.Buffer
	if err := WriteBenchfmt(&b, "baseline", []roofline.Point{p, analytic}); err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, "testdata/golden/noise.bench", b.Bytes())
	p.Samples.Seconds = nil
	if err := WriteBenchfmt(&b, "x", []roofline.Point{p}); err == nil {
		t.Error("point without samples written")
	}
}

func TestSignedPct(t *testing.T) {
	tests := []struct {
		x    float64
		want string
	}{
		{0.0312, "+3.12%"},
		{-0.04, "-4%"},
		{-2e-14, "+0%"},
		{9.5, "+950%"},
		{25.56, "×26.6"},
		{2702, "×2703"},
	}
	for _, tt := range tests {
		if got := unit.Change(tt.x); got != tt.want {
			t.Errorf("unit.Change(%v) = %q, want %q", tt.x, got, tt.want)
		}
	}
}
