package measure

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rprof/rprof/internal/stats"
	"github.com/rprof/rprof/internal/unit"
	"github.com/rprof/rprof/roofline"
)

// wideTimeShare is the confidence half-width of the mean time, as a share
// of the mean, above which the time is flagged: the rates and the fraction
// of attainable are then uncertain by at least as much, more than the
// distance between points a chart can tell apart (docs/schema-point.md
// gives the reasons and the figures).
const wideTimeShare = 0.20

// wideTimeFlag flags a time whose interval is wider than wideTimeShare of
// its mean, giving the net times, the repetitions that lie far from the
// others and, for each, whether its own run or its overhead run did, and
// how many CPUs stayed idle; nil when the interval is narrow or there is
// none. seconds are the net times, all positive.
func wideTimeFlag(p *roofline.Point, in inputs, seconds []float64) []roofline.Flag {
	if len(seconds) < 2 || !(p.Seconds > 0) {
		return nil
	}
	share := (p.CI.Seconds.Hi - p.CI.Seconds.Lo) / 2 / p.Seconds
	if !(share > wideTimeShare) {
		return nil
	}
	msg := fmt.Sprintf("the time's %g%% confidence half-width is %.0f%% of its mean (more than %.0f%%): the %d repetitions' net times run from %s s (fastest) to %s s (slowest), median %s s; ",
		p.CI.Confidence*100, share*100, wideTimeShare*100, len(seconds), unit.Sig(slices.Min(seconds)), unit.Sig(slices.Max(seconds)), unit.Sig(stats.Median(seconds)))
	msg += farRepetitions(in, seconds)
	if in.idleCPUs != nil {
		msg += fmt.Sprintf("; %.2f of the %d CPUs stayed idle on average while the repetitions ran", *in.idleCPUs, in.cpus)
	}
	return []roofline.Flag{{Code: roofline.FlagWideTime, Subject: roofline.SubjectSeconds, Message: msg}}
}

// farRepetitions says which repetitions' net times lie far from the
// others', and for each whether its overhead run or its own run lay far
// from the other runs of its kind.
func farRepetitions(in inputs, seconds []float64) string {
	far := stats.Outliers(seconds)
	switch {
	case len(seconds) < 3:
		return "too few to tell whether one lies far from the others"
	case len(far) == 0:
		return "none lies far from the others: they are spread throughout"
	}
	kernels := make([]float64, len(in.reps))
	var overheads []float64
	for i, r := range in.reps {
		kernels[i] = r.kernel.Wall.Seconds()
		if r.overhead != nil {
			overheads = append(overheads, r.overhead.Wall.Seconds())
		}
	}
	if len(overheads) != len(kernels) {
		overheads = nil
	}
	farKernel, farOverhead := stats.Outliers(kernels), stats.Outliers(overheads)
	names := make([]string, len(far))
	var why []string
	for j, i := range far {
		names[j] = fmt.Sprintf("%d (%s s)", i+1, unit.Sig(seconds[i]))
		if slices.Contains(farOverhead, i) {
			why = append(why, fmt.Sprintf("repetition %d's overhead run took %s s against the overhead runs' median %s s", i+1, unit.Sig(overheads[i]), unit.Sig(stats.Median(overheads))))
		}
		if slices.Contains(farKernel, i) {
			why = append(why, fmt.Sprintf("repetition %d's own run took %s s against the target runs' median %s s", i+1, unit.Sig(kernels[i]), unit.Sig(stats.Median(kernels))))
		}
	}
	msg := "repetition " + names[0] + " lies far from the others"
	if len(far) > 1 {
		msg = "repetitions " + strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1] + " lie far from the others"
	}
	if len(why) > 0 {
		msg += " (" + strings.Join(why, "; ") + ")"
	}
	return msg
}
