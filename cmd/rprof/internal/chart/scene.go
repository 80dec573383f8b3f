package chart

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/rprof/rprof/roofline"

	"github.com/rprof/rprof/internal/unit"
)

// maxPointLabels is the most points whose labels the image chart draws;
// beyond it labels smear into a blob and placing them costs seconds.
const maxPointLabels = 40

// MaxPointLabels is maxPointLabels for help texts and documents.
const MaxPointLabels = maxPointLabels

// ErrEmpty is returned when there is neither a roof nor a point to draw.
var ErrEmpty = errors.New("nothing to draw")

// scene is what a chart shows, in data units, computed once and drawn by
// both the graphical and the text renderers so they never disagree.
type scene struct {
	title   string
	threads int
	// Axis ranges: whole decades, so the log axes start and end on a tick.
	xmin, xmax, ymin, ymax float64
	compute                []roof // horizontal, GFLOP/s
	bandwidth              []roof // sloped, GB/s
	ridges                 []ridge
	points                 []placed
	// labelPoints is false when there are too many points for their
	// labels to be read on the image chart.
	labelPoints bool
	notes       []string
}

// roof is one ceiling. For a compute roof value is GFLOP/s; for a bandwidth
// roof it is GB/s, and the line is value*x GFLOP/s.
type roof struct {
	name      string // short name: "avx512-fma-fp64", "DRAM"
	precision string // compute roofs only
	value     float64
	ci        roofline.Interval
	// unknown: too few samples for an interval (ci is their range).
	unknown     bool
	theoretical bool
	// peak is the theoretical value of a measured compute roof when it is
	// drawn too, so that one label names both lines.
	peak float64
	// from and to bound the line on the intensity axis.
	from, to float64
	// color indexes the palette; a theoretical roof shares its measured
	// roof's colour.
	color int
}

// label is the text drawn next to a roof: its name, value, unit and CI.
func (r roof) label(u string) string {
	s := r.name + " " + unit.Value(r.value) + " " + u
	if pct, ok := unit.HalfWidthPercent(r.value, r.ci.Lo, r.ci.Hi); ok && !r.unknown {
		s += " ±" + pct
	}
	if r.unknown {
		s += ", uncertainty unknown"
	}
	if r.peak > 0 {
		s += ", theoretical " + unit.Value(r.peak)
	}
	return s
}

// ridge is where a bandwidth roof meets the compute peak that binds the
// points.
type ridge struct {
	level     string
	intensity float64 // FLOP/byte
	gflops    float64
}

// placed is a point ready to draw.
type placed struct {
	label          string
	x, y           float64 // FLOP/byte, GFLOP/s
	lo, hi         float64 // CI of y; equal to y when unknown
	bound          string  // roofline.BoundMemory, BoundCompute or "" (unknown)
	fraction       float64 // of attainable; 0 when not placed
	analytic       bool
	warning        bool     // a flag of Warning severity: drawn red
	flags          []string // codes of its caution and warning flags
	attainable     float64
	boundRoofLabel string
}

// buildScene selects the roofs of one thread scope and places the points
// under them. Values that a log axis cannot show are left out with a note.
func buildScene(r *roofline.Roofs, points []roofline.Point, opts Options) (*scene, error) {
	if r == nil && len(points) == 0 {
		return nil, fmt.Errorf("%w: no points and no roofs", ErrEmpty)
	}
	s := &scene{}
	threads, err := ThreadScope(r, points, opts.Threads)
	if err != nil {
		return nil, err
	}
	s.threads = threads
	if r != nil {
		s.addRoofs(r, opts.Theoretical, opts.AllRoofs)
		s.addRidges(points)
	}
	for i := range points {
		s.addPoint(r, &points[i])
	}
	if len(s.compute) == 0 && len(s.bandwidth) == 0 && len(s.points) == 0 {
		return nil, fmt.Errorf("%w: no roof or point has a value a log axis can show (%s)", ErrEmpty, strings.Join(s.notes, "; "))
	}
	s.labelPoints = len(s.points) <= maxPointLabels
	if !s.labelPoints {
		s.notef("%d points are more than the %d the image chart labels legibly: drawn small, without labels or CI bars", len(s.points), maxPointLabels)
	}
	s.setRanges()
	s.title = opts.Title
	if s.title == "" {
		s.title = defaultTitle(r, points, threads)
	}
	return s, nil
}

// ThreadScope picks the thread count whose roofs are drawn, by
// roofline.ThreadScope: the one asked for (an error when the roofs have none
// for it), else the first point's own scope, else the scope of the first
// point's parallelism, else the largest scope not above the CPUs of the first
// point's machine (the smallest without points).
func ThreadScope(r *roofline.Roofs, points []roofline.Point, want int) (int, error) {
	var scopes []int
	if r != nil {
		scopes = r.ThreadScopes()
		slices.Sort(scopes)
	}
	if want > 0 && r != nil && !slices.Contains(scopes, want) {
		return 0, fmt.Errorf("select roofs: none measured for %d threads (measured for %s)", want, joinInts(scopes))
	}
	in := roofline.ScopeInputs{Scopes: scopes, Want: want}
	for _, p := range points {
		if p.Threads > 0 && (r == nil || slices.Contains(scopes, p.Threads)) {
			in.Recorded = p.Threads
			break
		}
	}
	if len(points) > 0 {
		in.Parallelism, in.CPUs = points[0].Parallelism, points[0].Machine.Threads
	}
	if c := roofline.ThreadScope(in); c.Threads > 0 {
		return c.Threads, nil
	}
	return 1, nil
}

func (s *scene) addRoofs(r *roofline.Roofs, theoretical, all bool) {
	headline := headlineRoofs(r.Compute, s.threads)
	for _, c := range r.Compute {
		// Library roofs were asked for one by one (rprof roofs --dnn):
		// drawn always, as DGEMM is.
		library := c.Kind == roofline.ComputeKindLibrary
		if c.Threads != s.threads || !all && !library && !headline[c.Name] {
			continue
		}
		if !(c.GFlops > 0) || math.IsInf(c.GFlops, 0) {
			s.notef("compute roof %s left out: %g GFLOP/s is not a positive number", c.Name, c.GFlops)
			continue
		}
		measured := roof{name: c.Name, precision: c.Precision, value: c.GFlops, ci: c.CI, unknown: c.IntervalUnknown, color: s.nextColor()}
		if theoretical && c.TheoreticalGFlops > 0 {
			measured.peak = c.TheoreticalGFlops
			th := measured
			th.value, th.ci, th.unknown, th.theoretical, th.peak = c.TheoreticalGFlops, roofline.Interval{}, false, true, 0
			s.compute = append(s.compute, measured, th)
			continue
		}
		s.compute = append(s.compute, measured)
	}
	if d := r.DGEMM; d != nil && d.Threads == s.threads {
		if d.GFlops > 0 && !math.IsInf(d.GFlops, 0) {
			name := "DGEMM"
			if d.Library != "" {
				name += " (" + d.Library + ")"
			}
			s.compute = append(s.compute, roof{name: name, precision: roofline.Double, value: d.GFlops, ci: d.CI, unknown: d.IntervalUnknown, color: s.nextColor()})
		} else {
			s.notef("DGEMM roof left out: %g GFLOP/s is not a positive number", d.GFlops)
		}
	}
	for _, level := range levels(r) {
		b, ok := r.BandwidthAt(level, s.threads)
		if !ok {
			continue
		}
		if !(b.GBytesPerS > 0) || math.IsInf(b.GBytesPerS, 0) {
			s.notef("%s bandwidth roof left out: %g GB/s is not a positive number", level, b.GBytesPerS)
			continue
		}
		s.bandwidth = append(s.bandwidth, roof{name: level, value: b.GBytesPerS, ci: b.CI, unknown: b.IntervalUnknown, color: len(s.bandwidth)})
	}
	slices.SortStableFunc(s.compute, func(a, b roof) int { return cmpFloat(b.value, a.value) })
	slices.SortStableFunc(s.bandwidth, func(a, b roof) int { return cmpFloat(b.value, a.value) })
	if len(r.Compute) > 0 && len(s.compute) == 0 && r.DGEMM == nil {
		s.notef("no compute roof measured for %d threads", s.threads)
	}
}

// nextColor returns the palette index of the next measured compute roof.
func (s *scene) nextColor() int {
	n := 0
	for _, c := range s.compute {
		if !c.theoretical {
			n++
		}
	}
	return n
}

// peak is the highest measured compute roof of a precision ("" for any):
// the bandwidth roofs end at the highest of all.
func (s *scene) peak(precision string) (roof, bool) {
	for _, c := range s.compute {
		if !c.theoretical && (precision == "" || c.precision == precision) {
			return c, true
		}
	}
	return roof{}, false
}

// headlineRoofs names, for one thread scope, the compute roofs drawn by
// default: per precision the highest FMA roof (the machine's peak) and the
// highest scalar roof (what code that does not vectorise can reach).
// Sixteen kernels' ceilings, most within a few percent of each other, bury
// the point being read.
func headlineRoofs(cs []roofline.ComputeRoof, threads int) map[string]bool {
	best := map[string]roofline.ComputeRoof{}
	for _, c := range cs {
		if c.Threads != threads || c.Kind == roofline.ComputeKindLibrary {
			continue
		}
		class := c.Precision + " simd"
		if c.ISA == "scalar" {
			class = c.Precision + " scalar"
		} else if !strings.Contains(c.Name, "fma") {
			continue
		}
		if b, ok := best[class]; !ok || c.GFlops > b.GFlops {
			best[class] = c
		}
	}
	keep := map[string]bool{}
	for _, c := range best {
		keep[c.Name] = true
	}
	return keep
}

// addRidges marks where each bandwidth roof meets the peak that binds the
// points: the peak of their precision when they share one.
func (s *scene) addRidges(points []roofline.Point) {
	prec := ""
	for i := range points {
		p := points[i].Precision()
		if p == "" || prec != "" && p != prec {
			prec = ""
			break
		}
		prec = p
	}
	peak, ok := s.peak(prec)
	if !ok {
		if peak, ok = s.peak(""); !ok {
			return
		}
	}
	for _, b := range s.bandwidth {
		s.ridges = append(s.ridges, ridge{level: b.name, intensity: roofline.Ridge(peak.value, b.value), gflops: peak.value})
	}
}

// levels lists the memory levels of a roofs document, innermost first as
// the document gives them, each once.
func levels(r *roofline.Roofs) []string {
	var out []string
	for _, b := range r.Bandwidth {
		if !slices.Contains(out, b.Level) {
			out = append(out, b.Level)
		}
	}
	return out
}

func (s *scene) addPoint(r *roofline.Roofs, p *roofline.Point) {
	name := p.Label
	if name == "" {
		name = strings.Join(p.Command, " ")
	}
	if name == "" {
		name = "point"
	}
	if why := leftOut(p); why != "" {
		s.notef("point %q left out: %s", name, why)
		return
	}
	// Placed under the roofs of another thread scope, a point would look
	// above or below its roof for no reason of its own: it is drawn but
	// not placed.
	otherScope := p.Threads > 0 && p.Threads != s.threads
	if otherScope {
		s.notef("point %q was measured with %s: drawn with the %d-thread roofs but not placed under them", name, plural(p.Threads, "thread"), s.threads)
	}
	pt := placed{label: name, x: *p.Intensity, y: *p.GFlops, analytic: p.Source == roofline.SourceAnalytic}
	pt.lo, pt.hi = pt.y, pt.y
	if ci := p.CI.GFlops; ci != nil && ci.Lo > 0 && ci.Lo <= pt.y && pt.y <= ci.Hi {
		pt.lo, pt.hi = ci.Lo, ci.Hi
	}
	for _, f := range p.Flags {
		// Info flags (a VM, emulation, an analytic point) say how the
		// point was obtained, not that anything is wrong with it: they
		// do not single the point out.
		if f.Severity() > roofline.Info && !slices.Contains(pt.flags, f.Code) {
			pt.flags = append(pt.flags, f.Code)
			pt.warning = pt.warning || f.Severity() == roofline.Warning
		}
	}
	if r != nil && !otherScope {
		s.place(r, p, name, &pt)
	}
	s.points = append(s.points, pt)
}

// leftOut is why a point cannot be drawn, or "".
func leftOut(p *roofline.Point) string {
	switch {
	case p.Intensity == nil:
		return "intensity unknown (W or Q was not counted)"
	case p.GFlops == nil && p.WorkFlops == nil:
		return "GFLOP/s unknown (W was not counted)"
	case p.GFlops == nil:
		return "GFLOP/s unknown (the time is unknown: see the point's flags)"
	case !(*p.Intensity > 0) || math.IsInf(*p.Intensity, 0):
		return fmt.Sprintf("intensity %g FLOP/byte cannot be shown on a log axis", *p.Intensity)
	case !(*p.GFlops > 0) || math.IsInf(*p.GFlops, 0):
		return fmt.Sprintf("%g GFLOP/s cannot be shown on a log axis", *p.GFlops)
	}
	return ""
}

// place puts pt under the roofs r: its fraction of the attainable, the
// binding roof, and the above-roof flag when it is above them.
func (s *scene) place(r *roofline.Roofs, p *roofline.Point, name string, pt *placed) {
	pl, err := r.PlacePoint(p, s.threads)
	if err != nil {
		s.notef("point %q not placed: %v", name, err)
		return
	}
	pt.fraction = pl.Fraction
	pt.attainable = pl.AttainableGFlops
	pt.bound = pl.Bound.Kind
	pt.boundRoofLabel = pl.Bound.Roof
	if pl.AboveRoof(p) && !slices.Contains(pt.flags, roofline.FlagAboveRoof) {
		pt.flags = append(pt.flags, roofline.FlagAboveRoof)
		pt.warning = true
	}
}

// setRanges chooses whole-decade axes holding every ridge, point and roof
// with some margin, and cuts the roof lines to them.
func (s *scene) setRanges() {
	xs, ys := []float64{}, []float64{}
	for _, r := range s.ridges {
		xs = append(xs, r.intensity)
	}
	for _, p := range s.points {
		xs = append(xs, p.x)
		ys = append(ys, p.y, p.lo, p.hi)
	}
	for _, c := range s.compute {
		ys = append(ys, c.value)
	}
	if len(xs) == 0 {
		xs = append(xs, 1)
	}
	s.xmin = decadeBelow(slices.Min(xs) / 3)
	s.xmax = decadeAbove(slices.Max(xs) * 3)
	// At least four decades of intensity, so the slope of the bandwidth
	// roofs reads as a slope.
	for math.Log10(s.xmax/s.xmin) < 4-1e-9 {
		s.xmax *= 10
		if math.Log10(s.xmax/s.xmin) < 4-1e-9 {
			s.xmin /= 10
		}
	}
	if len(s.points) == 0 {
		// Roofs only: show where the bandwidth roofs start.
		for _, b := range s.bandwidth {
			ys = append(ys, b.value*s.xmin)
		}
	}
	s.ymin = decadeBelow(slices.Min(ys) / 1.5)
	s.ymax = decadeAbove(slices.Max(ys) * 1.5)
	// At least three decades of performance; with points, the bandwidth
	// roofs are cut where they leave the chart rather than stretching it
	// downwards.
	if s.ymax/s.ymin < 1e3*(1-1e-9) {
		s.ymin = s.ymax / 1e3
	}
	peak, hasPeak := s.peak("")
	for i := range s.bandwidth {
		b := &s.bandwidth[i]
		b.from, b.to = s.xmin, s.xmax
		if hasPeak {
			b.to = peak.value / b.value
		}
		if v := b.value * b.from; v < s.ymin {
			b.from = s.ymin / b.value
		}
		if v := b.value * b.to; v > s.ymax {
			b.to = s.ymax / b.value
		}
	}
	for i := range s.compute {
		c := &s.compute[i]
		c.from, c.to = s.xmin, s.xmax
		// A compute roof starts where the fastest memory level reaches it.
		if len(s.bandwidth) > 0 {
			c.from = math.Max(s.xmin, c.value/s.bandwidth[0].value)
		}
	}
}

func defaultTitle(r *roofline.Roofs, points []roofline.Point, threads int) string {
	var m roofline.Machine
	var date string
	switch {
	case r != nil:
		m = r.Machine
		if !r.Created.IsZero() {
			date = r.Created.UTC().Format("2006-01-02")
		}
	case len(points) > 0:
		m = points[0].Machine
		if !points[0].Created.IsZero() {
			date = points[0].Created.UTC().Format("2006-01-02")
		}
	}
	cpu := m.CPU.ModelName
	if cpu == "" {
		cpu = m.CPU.Microarch
	}
	if cpu == "" {
		cpu = "unknown CPU"
	}
	parts := []string{"Roofline: " + cpu, plural(threads, "thread")}
	if m.VM {
		parts = append(parts, "VM")
	}
	if date != "" {
		parts = append(parts, date)
	}
	return strings.Join(parts, ", ")
}

func (s *scene) notef(format string, args ...any) {
	s.notes = append(s.notes, fmt.Sprintf(format, args...))
}

func decadeBelow(v float64) float64 { return math.Pow(10, math.Floor(math.Log10(v)+1e-9)) }
func decadeAbove(v float64) float64 { return math.Pow(10, math.Ceil(math.Log10(v)-1e-9)) }

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func joinInts(v []int) string {
	if len(v) == 0 {
		return "no thread count"
	}
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ", ")
}
