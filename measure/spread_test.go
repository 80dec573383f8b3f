package measure

import (
	"strings"
	"testing"
	"time"

	"github.com/rprof/rprof/roofline"
)

// timedReps are repetitions of recorded wall times (s): the target's runs
// and, where overheads is not nil, the overhead run before each.
func timedReps(kernels, overheads []float64) []rep {
	reps := make([]rep, len(kernels))
	for i, k := range kernels {
		reps[i].kernel = Outcome{Wall: time.Duration(k * float64(time.Second))}
		if overheads != nil {
			reps[i].overhead = &Outcome{Wall: time.Duration(overheads[i] * float64(time.Second))}
		}
	}
	return reps
}

// The recorded values are the README's first session on the quiet Zen 5
// guest (./examples/triad 20000000 20: 0.46-0.47 s; with 1 pass, the
// overhead: 0.20-0.22 s), with one run made slow as a CI run's was.
func TestWideTimeIntervalIsFlaggedWithTheRepetitionsFarFromTheOthers(t *testing.T) {
	idle := 0.12
	tests := []struct {
		name               string
		kernels, overheads []float64
		idleCPUs           *float64
		flagged            bool
		says, omits        []string
	}{
		{name: "steady repetitions are not flagged",
			kernels:   []float64{0.462, 0.468, 0.465, 0.470, 0.464},
			overheads: []float64{0.210, 0.205, 0.215, 0.212, 0.208}},
		{name: "a slow target run is named as the repetition far from the others",
			kernels:   []float64{0.462, 0.468, 0.465, 0.900, 0.464},
			overheads: []float64{0.210, 0.205, 0.215, 0.212, 0.208},
			idleCPUs:  &idle, flagged: true,
			says: []string{"net times run from 0.25 s (fastest) to 0.688 s (slowest), median 0.256 s",
				"repetition 4 (0.688 s) lies far from the others (repetition 4's own run took 0.9 s against the target runs' median 0.465 s)",
				"0.12 of the 2 CPUs stayed idle"},
			omits: []string{"overhead run took"}},
		{name: "a slow overhead run is named as the cause of its repetition's short net time",
			kernels:   []float64{0.462, 0.468, 0.465, 0.470, 0.464},
			overheads: []float64{0.210, 0.430, 0.215, 0.212, 0.208},
			flagged:   true,
			says:      []string{"repetition 2 (0.038 s) lies far from the others (repetition 2's overhead run took 0.43 s against the overhead runs' median 0.212 s)"},
			omits:     []string{"own run took", "stayed idle"}},
		{name: "two far repetitions are both named",
			kernels:   []float64{0.462, 0.468, 0.465, 0.470, 0.464, 0.466, 0.469},
			overheads: []float64{0.210, 0.430, 0.215, 0.212, 0.208, 0.211, 0.440},
			flagged:   true,
			says: []string{"repetitions 2 (0.038 s) and 7 (0.029 s) lie far from the others",
				"repetition 7's overhead run took 0.44 s"}},
		{name: "an even spread is flagged with no repetition singled out",
			kernels: []float64{0.2, 0.3, 0.4, 0.5, 0.6}, flagged: true,
			says: []string{"none lies far from the others"}, omits: []string{"repetition "}},
		{name: "two repetitions are too few to single one out",
			kernels: []float64{0.46, 0.60}, flagged: true,
			says: []string{"half-width is 168% of its mean (more than 20%)", "too few to tell"}},
		{name: "one repetition has no interval to flag",
			kernels: []float64{0.46}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := inputs{cfg: testConfig(), source: roofline.SourceAnalytic, cpus: 2,
				reps: timedReps(tt.kernels, tt.overheads), idleCPUs: tt.idleCPUs}
			if tt.overheads != nil {
				in.cfg.Counting.Overhead = []string{"/bin/kernel", "-n", "1"}
			}
			p, err := buildPoint(in)
			if err != nil {
				t.Fatal(err)
			}
			var msg string
			n := 0
			for _, f := range p.Flags {
				if f.Code == roofline.FlagWideTime {
					msg, n = f.Message, n+1
					if f.Subject != roofline.SubjectSeconds {
						t.Errorf("subject %q, want %q", f.Subject, roofline.SubjectSeconds)
					}
				}
			}
			if got := n > 0; got != tt.flagged || n > 1 {
				t.Fatalf("%d %s flags (interval %+v of mean %g), want flagged %v: %+v", n, roofline.FlagWideTime, p.CI.Seconds, p.Seconds, tt.flagged, p.Flags)
			}
			for _, s := range tt.says {
				if !strings.Contains(msg, s) {
					t.Errorf("message %q\ndoes not say %q", msg, s)
				}
			}
			for _, s := range tt.omits {
				if strings.Contains(msg, s) {
					t.Errorf("message %q\nsays %q", msg, s)
				}
			}
		})
	}
}

// Each repetition's net time is its run less its own overhead run, so a
// slowdown over both (load, clock) cancels; subtracting the overhead runs'
// median from every run would leave it, here as net times of 0.15 to
// 0.35 s.
func TestNetTimesPairEachRunWithItsOwnOverheadRun(t *testing.T) {
	in := inputs{cfg: testConfig(), source: roofline.SourceAnalytic, cpus: 2,
		reps: timedReps([]float64{0.46, 0.56, 0.66}, []float64{0.21, 0.31, 0.41})}
	in.cfg.Counting.Overhead = []string{"/bin/kernel", "-n", "1"}
	p, err := buildPoint(in)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range p.Samples.Seconds {
		if !near(s, 0.25) {
			t.Errorf("net times %v, want 0.25 s each", p.Samples.Seconds)
			break
		}
	}
	if w := p.CI.Seconds.Hi - p.CI.Seconds.Lo; w > 1e-9 || hasFlag(p, roofline.FlagWideTime, "") {
		t.Errorf("interval %+v flags %+v, want no width and no flag", p.CI.Seconds, p.Flags)
	}
}
