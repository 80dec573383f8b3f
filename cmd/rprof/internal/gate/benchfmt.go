package gate

import (
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/rprof/rprof/roofline"
)

// WriteBenchfmt writes points in the Go benchmark format, one result line
// per repetition, after a "run: <run>" configuration line, so that
// `benchstat -col run FILE` compares runs written to one file. Each line has
// the repetition's time in ns/op, and its W in flop/op and Q in dram-B/op
// when they were counted per repetition or given analytically. Times are
// rounded to 0.1 ns, below any timer's resolution.
func WriteBenchfmt(w io.Writer, run string, points []roofline.Point) error {
	ew := &errWriter{w: w}
	fmt.Fprintf(ew, "run: %s\n", run)
	for _, p := range points {
		if len(p.Samples.Seconds) == 0 {
			return fmt.Errorf("benchmark format: point %q keeps no per-repetition times", p.Label)
		}
		if cpu := p.Machine.CPU.ModelName; cpu != "" {
			fmt.Fprintf(ew, "cpu: %s\n", cpu)
		}
		for i, t := range p.Samples.Seconds {
			line := fmt.Sprintf("BenchmarkRprof/%s 1 %s ns/op", benchName(p.Label), strconv.FormatFloat(math.Round(t*1e10)/10, 'f', -1, 64))
			if v, ok := perRep(p.Samples.WorkFlops, p.WorkFlops, p.Source, i, len(p.Samples.Seconds)); ok {
				line += " " + strconv.FormatFloat(v, 'f', -1, 64) + " flop/op"
			}
			if v, ok := perRep(p.Samples.TrafficBytes, p.TrafficBytes, p.Source, i, len(p.Samples.Seconds)); ok {
				line += " " + strconv.FormatFloat(v, 'f', -1, 64) + " dram-B/op"
			}
			fmt.Fprintln(ew, line)
		}
	}
	return ew.err
}

// perRep is repetition i's count: its own sample, or the analytic value,
// which is the same for every repetition. A median of counters is not
// repeated as if it were a sample.
func perRep(samples []float64, value *float64, source string, i, n int) (float64, bool) {
	if len(samples) == n {
		return samples[i], true
	}
	if source == roofline.SourceAnalytic && value != nil {
		return *value, true
	}
	return 0, false
}
