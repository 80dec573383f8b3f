package render

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/rprof/rprof/internal/unit"
	"github.com/rprof/rprof/roofline"
)

// footnotes numbers a point's flags and marks the lines they concern; the
// flags no line claims are marked on the heading.
type footnotes struct {
	flags []roofline.Flag
	used  map[int]bool
}

// marks returns " [1][3]" for the flags matched by keep, or "".
func (fn *footnotes) marks(keep func(roofline.Flag) bool) string {
	var b strings.Builder
	for i, f := range fn.flags {
		if keep(f) {
			fmt.Fprintf(&b, "[%d]", i+1)
			fn.used[i] = true
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return " " + b.String()
}

// rest marks the flags no line has claimed.
func (fn *footnotes) rest() string {
	var b strings.Builder
	for i := range fn.flags {
		if !fn.used[i] {
			fmt.Fprintf(&b, "[%d]", i+1)
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return " " + b.String()
}

func about(codes ...string) func(roofline.Flag) bool {
	return func(f roofline.Flag) bool {
		for _, c := range codes {
			if f.Code == c {
				return true
			}
		}
		return false
	}
}

// aboutSubject matches the flags about any of the subjects (figures of the
// point, roofline.Subject*).
func aboutSubject(subjects ...string) func(roofline.Flag) bool {
	return func(f roofline.Flag) bool { return f.Subject != "" && slices.Contains(subjects, f.Subject) }
}

// aboutEvent matches the flags about one counter.
func aboutEvent(name string) func(roofline.Flag) bool {
	return aboutSubject(roofline.EventSubject(name))
}

// WriteRunSummary prints the point the way perf stat prints counts: value,
// unit, what it is and how it was obtained, then the events and the
// footnotes.
func WriteRunSummary(out io.Writer, p *roofline.Point, scope string) {
	s := &summary{p: p, fn: &footnotes{flags: p.Flags, used: map[int]bool{}}}
	if p.Source != roofline.SourceEvents {
		s.counted()
	}
	s.timed()
	s.placement(scope)
	writeEmulation(&s.w, p, s.line)
	s.events()
	if p.Exit.Code != 0 || p.Exit.Signal != "" {
		fmt.Fprintf(&s.w, "\n  exit status %d%s\n", p.Exit.Code, s.fn.marks(aboutSubject(roofline.SubjectExit)))
	}
	runs, how := s.heading()
	fmt.Fprintf(out, "\n Roofline point of '%s' (%s, %s)%s:\n\n", strings.Join(p.Command, " "), runs, how, s.fn.rest())
	io.WriteString(out, s.w.String())
	if len(s.fn.flags) > 0 {
		fmt.Fprintln(out)
		for i, f := range s.fn.flags {
			fmt.Fprintf(out, "  [%d] %s (%s): %s\n", i+1, f.Code, f.Severity(), f.Message)
		}
	}
	fmt.Fprintln(out)
}

// summary is the body of a run summary being written, with its footnotes.
type summary struct {
	w  strings.Builder
	p  *roofline.Point
	fn *footnotes
}

// heading says how many runs made the point and how W and Q were obtained.
func (s *summary) heading() (runs, how string) {
	p := s.p
	runs = "1 run"
	switch {
	case p.Job != nil:
		runs = fmt.Sprintf("%d ranks on %d node(s), merged", p.Job.Ranks-len(p.Job.Missing), len(p.Job.Nodes))
	case p.CI.N != 1:
		runs = fmt.Sprintf("%d runs", p.CI.N)
	}
	how = map[string]string{
		roofline.SourceCounters: "W and Q from hardware counters",
		roofline.SourceAnalytic: "analytic W and Q, time measured",
		roofline.SourceEvents:   "events only: W and Q not measured",
		roofline.SourceEmulated: "W and Q counted under emulation, T from native runs",
	}[p.Source]
	return runs, how
}

// line writes one figure: value, unit, what it is and how it was obtained.
func (s *summary) line(value, u, what, detail string) {
	l := fmt.Sprintf("  %18s %-8s %-14s %s", value, u, what, strings.TrimSpace(detail))
	fmt.Fprintln(&s.w, strings.TrimRight(l, " "))
}

// median says how a counted W or Q was summarised: the median of the runs,
// with their range as the spread.
func (s *summary) median(samples []float64) string {
	p := s.p
	var parts []string
	if p.CI.N > 1 && p.Source == roofline.SourceCounters && len(samples) > 1 {
		parts = append(parts, fmt.Sprintf("median of %d, range %s .. %s", p.CI.N, unit.Count(slices.Min(samples)), unit.Count(slices.Max(samples))))
	}
	if p.Overhead != nil {
		parts = append(parts, "overhead subtracted")
	}
	return strings.Join(parts, ", ")
}

// counted writes W, Q and the intensity.
func (s *summary) counted() {
	p, fn := s.p, s.fn
	var by []string
	for _, k := range sortedKeys(p.WorkByPrecision) {
		by = append(by, k+" "+unit.Count(p.WorkByPrecision[k]))
	}
	s.line(OrUnknown(p.WorkFlops, unit.Count), "FLOP", "work", details(strings.Join(by, ", "), s.median(p.Samples.WorkFlops))+fn.marks(aboutSubject(roofline.SubjectWork)))
	rw := ""
	if p.ReadBytes != nil || p.WriteBytes != nil {
		rw = fmt.Sprintf("read %s, write %s", OrUnknown(p.ReadBytes, unit.Count), OrUnknown(p.WriteBytes, unit.Count))
	}
	q := OrUnknown(p.TrafficBytes, unit.Count)
	if p.TrafficBytes == nil && slices.ContainsFunc(p.Flags, about(roofline.FlagNotModelled)) {
		q = "not modelled"
	}
	s.line(q, "B", "DRAM traffic", details(rw, s.median(p.Samples.TrafficBytes))+
		fn.marks(func(f roofline.Flag) bool {
			return f.Code == roofline.FlagNoUncore || aboutSubject(roofline.SubjectTraffic, roofline.SubjectRead, roofline.SubjectWrite)(f)
		}))
	why := ""
	if p.Intensity == nil {
		why = fn.marks(func(f roofline.Flag) bool {
			return about(roofline.FlagNoUncore, roofline.FlagAnalytic, roofline.FlagNotModelled)(f) ||
				f.Code == roofline.FlagNegative && aboutSubject(roofline.SubjectWork, roofline.SubjectTraffic)(f)
		})
	}
	s.line(OrUnknown(p.Intensity, unit.Value), "FLOP/B", "intensity", why)
}

// timed writes T and, with W or Q, the rates.
func (s *summary) timed() {
	p := s.p
	tci := ""
	// An unknown time (not positive after subtraction) has no interval.
	if p.CI.N > 1 && p.Seconds > 0 {
		tci = fmt.Sprintf("(%g%% CI %.6f .. %.6f, %s, n=%d)", p.CI.Confidence*100, p.CI.Seconds.Lo, p.CI.Seconds.Hi, p.CI.Method, p.CI.N)
		if pm, ok := unit.HalfWidthPercent(p.Seconds, p.CI.Seconds.Lo, p.CI.Seconds.Hi); ok {
			tci = "± " + pm + " " + tci
		}
	}
	if p.Overhead != nil && p.Overhead.Command != nil {
		tci = details(tci, "overhead subtracted")
	}
	secs := fmt.Sprintf("%.6f", p.Seconds)
	if p.Seconds == 0 {
		secs = "<unknown>"
	}
	// A merged point's time is one wall interval, its rates W/T and Q/T.
	timeHow, rateHow := "mean", "mean"
	if p.Job != nil {
		timeHow, rateHow = "wall, first rank's start to last rank's end", "over that time"
	}
	s.line(secs, "s", "time", details(timeHow, tci)+s.fn.marks(aboutSubject(roofline.SubjectSeconds)))
	if p.Parallelism > 0 {
		s.line(fmt.Sprintf("%.2f", p.Parallelism), "CPUs", "parallelism", fmt.Sprintf("CPU time %.6f s over wall time, mean", p.CPUSeconds))
	}
	if p.Source == roofline.SourceEvents {
		return
	}
	s.line(OrUnknown(p.GFlops, unit.Value), "GFLOP/s", "performance", known(p.GFlops, rateHow+halfWidth(p.GFlops, p.CI.GFlops)))
	s.line(OrUnknown(p.GBytesPerS, unit.Value), "GB/s", "bandwidth", known(p.GBytesPerS, rateHow+halfWidth(p.GBytesPerS, p.CI.GBytesPerS)))
}

// halfWidth is " ± 12%" for a rate v with interval ci, "" without one.
func halfWidth(v *float64, ci *roofline.Interval) string {
	if v == nil || ci == nil {
		return ""
	}
	if pm, ok := unit.HalfWidthPercent(*v, ci.Lo, ci.Hi); ok {
		return " ± " + pm
	}
	return ""
}

// placement writes where the point sits under the roofs, when it was
// placed under some.
func (s *summary) placement(scope string) {
	p := s.p
	if p.RoofsFile == "" {
		return
	}
	fmt.Fprintln(&s.w)
	if p.Bound != nil {
		s.line(unit.Value(*p.AttainableGFlops), "GFLOP/s", "attainable", "at this intensity; bound: "+p.Bound.String())
		how := ""
		if hw := halfWidth(p.GFlops, p.CI.GFlops); hw != "" {
			how = strings.TrimSpace(hw) + " (performance's interval, not the roof's)"
		}
		s.line(unit.Percent(*p.FractionOfAttainable), "", "of attainable", strings.TrimSpace(how+s.fn.marks(aboutSubject(roofline.SubjectPlacement))))
	} else {
		s.line("", "", "not placed", notPlacedReason(p))
	}
	fmt.Fprintf(&s.w, "  roofs %s, thread scope %d (%s)\n", p.RoofsFile, p.Threads, scope)
}

// events writes every counter's count, as perf stat does.
func (s *summary) events() {
	p := s.p
	if len(p.Events) == 0 {
		return
	}
	what := "counts"
	if p.CI.N > 1 {
		what = fmt.Sprintf("median of %d runs", p.CI.N)
	}
	if p.Overhead != nil && p.Overhead.Command != nil {
		what += ", overhead run subtracted"
	}
	fmt.Fprintf(&s.w, "\n  events (%s):\n", what)
	width := 0
	for _, ev := range p.Events {
		width = max(width, len(ev.Name))
	}
	for _, ev := range p.Events {
		counted := "not counted"
		if ev.Enabled > 0 {
			counted = "(" + unit.Percent(float64(ev.Running)/float64(ev.Enabled)) + " counted)"
		}
		fmt.Fprintf(&s.w, "  %18s %-8s %-*s  %s%s\n", unit.Count(ev.Value), ev.Unit, width, ev.Name, counted, s.fn.marks(aboutEvent(ev.Name)))
	}
}

func notPlacedReason(p *roofline.Point) string {
	switch {
	case p.Intensity == nil:
		return "intensity unknown, so the point has no place under the roofs"
	case p.GFlops == nil:
		return "GFLOP/s unknown"
	case *p.Intensity == 0 || *p.GFlops == 0:
		return "no floating-point work: the point has no place on log axes"
	}
	return fmt.Sprintf("the roofs have no compute or DRAM roof for %d threads", p.Threads)
}

// details joins the non-empty parts of a line's detail with "; ".
func details(parts ...string) string {
	var keep []string
	for _, p := range parts {
		if p != "" {
			keep = append(keep, p)
		}
	}
	return strings.Join(keep, "; ")
}

// known is detail when v is known, else "".
func known(v *float64, detail string) string {
	if v == nil {
		return ""
	}
	return detail
}

func OrUnknown(v *float64, format func(float64) string) string {
	if v == nil {
		return "<unknown>"
	}
	return format(*v)
}

func sortedKeys(m map[string]float64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// WriteRankSummary is a rank's one line: many ranks print at once, and
// the job's point comes from rprof merge.
func WriteRankSummary(w io.Writer, p *roofline.Point) {
	r := p.Rank
	q := "DRAM traffic counted by this node's owner"
	switch {
	case p.Source == roofline.SourceEmulated:
		q = fmt.Sprintf("modelled DRAM traffic %s B (this rank's own)", OrUnknown(p.TrafficBytes, unit.Count))
	case r.TrafficOwner:
		q = fmt.Sprintf("node DRAM traffic %s B (traffic owner, for the node's %d local ranks)", OrUnknown(p.TrafficBytes, unit.Count), r.LocalSize)
	}
	flags := ""
	if n := len(p.Flags); n > 0 {
		flags = fmt.Sprintf("; flags: %d (in the point file)", n)
	}
	fmt.Fprintf(w, "rprof run: rank %d/%d on %s (local %d/%d): work %s FLOP in %.6f s; %s%s\n",
		r.Rank, r.Size, r.Node, r.LocalRank, r.LocalSize, OrUnknown(p.WorkFlops, unit.Count), p.Seconds, q, flags)
}

// ExitText says how a target ended: "exited with status N" or "was
// killed by SIG".
func ExitText(x roofline.Exit) string {
	if x.Signal != "" {
		return "was killed by " + x.Signal
	}
	return fmt.Sprintf("exited with status %d", x.Code)
}

// RelHalf is the half-width of a point's time interval as a share of its
// time ("1.2%"), or "?" without one.
func RelHalf(p *roofline.Point) string {
	if p.Seconds <= 0 || p.CI.N < 2 {
		return "?"
	}
	return fmt.Sprintf("%.2g%%", (p.CI.Seconds.Hi-p.CI.Seconds.Lo)/2/p.Seconds*100)
}
