package measure

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/rprof/rprof/internal/launch"
	"github.com/rprof/rprof/regions"
	"github.com/rprof/rprof/roofline"
)

// regionPlan is what every run of the target attaches: resolved, and its
// probes' cost calibrated, before anything runs.
type regionPlan struct {
	probes []regions.Probe
	// counters are read per CPU at every probe: the plan's work events,
	// then the per-process -e events; their meaning is in counters, their
	// encodings in opts.Counters.
	counters []Counter
	opts     regions.Options
	// attributed: W and Q of regions come from the backend's attribution
	// by function (the emulate backend), not from counters read by the
	// probes.
	attributed bool
	// notes are flags about every region (why W or Q are not counted per
	// region).
	notes []roofline.Flag
}

// regionCounter is a backend whose counters region probes can read on the
// CPU a probe fires on: it says which.
type regionCounter interface {
	regionSpecs() []counterSpec
}

// session is an attached regions.Session.
type session interface {
	Stop() (regions.Result, error)
	Close() error
}

// probedRun attaches a plan's probes to one run of the target.
type probedRun struct {
	plan    *regionPlan
	session session
	result  *regions.Result
}

// hook attaches the probes to the held target and stops them once it
// was reaped, keeping the figures.
func (pr *probedRun) hook() launch.Hook {
	return launch.Hook{
		Attach: func(h launch.Held) error {
			s, err := attachRegions(h.PID, pr.plan)
			if err != nil {
				return err
			}
			pr.session = s
			return nil
		},
		Reap: func(int) error {
			res, err := pr.session.Stop()
			if err != nil {
				return err
			}
			pr.result = &res
			return nil
		},
	}
}

// close detaches whatever is still attached, on every path.
func (pr *probedRun) close() {
	if pr.session != nil {
		pr.session.Close()
	}
}

// regionInvalid marks a resolution failure (unknown symbol or version,
// inlined function, stripped file, library not found) as bad input, keeping its type for errors.As.
func regionInvalid(err error) error {
	var se *regions.SymbolError
	var le *regions.LibraryError
	var ie *regions.InlinedError
	if errors.As(err, &se) || errors.As(err, &le) || errors.As(err, &ie) || errors.Is(err, regions.ErrStripped) || errors.Is(err, regions.ErrBadSpec) {
		return fieldErr(err, "Counting.Regions")
	}
	return err
}

// nameProbe says which probe measured region i: a function's uprobe (the
// first nfun regions) or the LIKWID marker calls.
func nameProbe(r *roofline.Region, plan *regionPlan, i, nfun int, name string) {
	if i < nfun {
		p := plan.probes[i]
		r.ProbeFirst = string(regions.KindOf(p.First))
		r.Probe = p.Path + ":" + p.Spec.Symbol
		if p.Version != "" {
			r.Probe += "@" + p.Version
		}
		if p.Spec.Symbol == "" {
			r.Probe = fmt.Sprintf("%s:%#x", p.Path, p.Spec.Addr)
		}
		return
	}
	r.Probe = "likwid:" + name
	for _, p := range plan.probes {
		if p.Kind == regions.MarkerStart {
			r.ProbeFirst = string(regions.KindOf(p.First))
		}
	}
}

// regionCounts turns a region's counts, read while it ran, into its W (by
// precision), GFLOP/s and events, scaled from the counted time to the
// region's whole time.
func regionCounts(r *roofline.Region, st regions.Stats, counters []Counter) {
	scale := st.Seconds / st.CountedSeconds
	var work float64
	var hasWork bool
	by := map[string]float64{}
	for j, c := range counters {
		v := st.Counts[j].Value()
		switch c.Kind {
		case KindWork:
			hasWork = true
			work += v * c.Weight
			by[c.Precision] += v * c.Weight * scale
		case KindEvent:
			r.Events = append(r.Events, roofline.EventCount{Name: c.Name, PMU: c.PMU,
				Value: v * scale, Raw: st.Counts[j].Raw, Enabled: st.Counts[j].Enabled,
				Running: st.Counts[j].Running, Unit: c.Unit})
		}
	}
	if hasWork {
		r.WorkFlops = ptr(work * scale)
		r.WorkByPrecision = by
		r.GFlops = ptr(roofline.Rate(work, st.CountedSeconds))
	}
}

// regionPoints turns a probed run's figures into regions: W from the
// work counters' deltas (count x FLOPs per count, each scaled for
// multiplexing), the -e events, and both extrapolated from the calls that
// were counted to all calls by time; flags for what limits each figure.
//
// Where the backend attributes W and Q by function (plan.attributed), a
// function region takes its function's W and Q from that table instead.
func regionPoints(plan *regionPlan, res regions.Result, funcs []roofline.FunctionCount, roofs *roofline.Roofs, threads int) []roofline.Region {
	var out []roofline.Region
	for i, st := range res.Regions {
		out = append(out, regionPoint(plan, res, i, st, funcs, roofs, threads))
	}
	return out
}

// groupPoints is regionPoints for calls split into groups (Hooks.CallGroups):
// each group's calls are summarised as a region of their own, the probe
// and cost of the region they were calls of.
func groupPoints(plan *regionPlan, res regions.Result, groups []CallGroup, roofs *roofline.Roofs, threads int) []roofline.Region {
	var out []roofline.Region
	for _, g := range groups {
		i := g.Region
		if i < 0 || i >= len(res.Regions) {
			continue
		}
		st := regions.Summarize(g.Name, res.Regions[i].Cost, len(plan.counters), g.Calls)
		out = append(out, regionPoint(plan, res, i, st, nil, roofs, threads))
	}
	return out
}

// regionPoint is one region's figures: st, measured at the probe of
// region i of res.
func regionPoint(plan *regionPlan, res regions.Result, i int, st regions.Stats, funcs []roofline.FunctionCount, roofs *roofline.Roofs, threads int) roofline.Region {
	nfun := 0
	for _, p := range plan.probes {
		if p.Kind == regions.Function {
			nfun++
		}
	}
	r := roofline.Region{Name: st.Name, Calls: st.Calls, Seconds: st.Seconds, SelfSeconds: st.SelfSeconds,
		MeanSeconds: st.Mean, MedianSeconds: st.Median, P99Seconds: st.P99, MeasuredSeconds: st.MeasuredSeconds,
		ProbeCostSeconds: st.Cost.Inside.Seconds(), ProbeCallSeconds: st.Cost.Call.Seconds()}
	nameProbe(&r, plan, i, nfun, st.Name)
	if st.Seconds > 0 && len(plan.counters) > 0 {
		r.CountedFraction = min(st.CountedSeconds/st.Seconds, 1)
	}
	if st.CountedSeconds > 0 && len(st.Counts) == len(plan.counters) {
		regionCounts(&r, st, plan.counters)
	}
	if plan.attributed {
		r.Flags = append(r.Flags, attribute(&r, st, plan, i, nfun, funcs)...)
	}
	if r.WorkFlops != nil && r.TrafficBytes != nil && *r.TrafficBytes > 0 {
		r.Intensity = ptr(*r.WorkFlops / *r.TrafficBytes)
	}
	if roofs != nil && r.Intensity != nil && r.GFlops != nil {
		if pl, err := roofs.Place(*r.Intensity, *r.GFlops, threads, ""); err == nil && pl.AttainableGFlops > 0 {
			r.Bound, r.AttainableGFlops, r.FractionOfAttainable = &pl.Bound, ptr(pl.AttainableGFlops), ptr(pl.Fraction)
		}
	}
	r.Flags = append(r.Flags, regionFlags(st, len(plan.counters) > 0)...)
	if i < len(res.Lost) && res.Lost[i] > 0 {
		r.Flags = append(r.Flags, roofline.Flag{Code: roofline.FlagLostRecords,
			Message: fmt.Sprintf("%d probe records were dropped (ring buffer full): calls are missing", res.Lost[i])})
	}
	return r
}

// regionFlags says what limits one region's figures.
func regionFlags(st regions.Stats, counted bool) []roofline.Flag {
	var fl []roofline.Flag
	if st.Calls == 0 && st.NeverLeft == 0 {
		fl = append(fl, roofline.Flag{Code: roofline.FlagNoCalls,
			Message: "never called (a library the target did not load, code it did not reach, or a symbol version it does not bind to)"})
	}
	if st.NeverLeft > 0 {
		fl = append(fl, roofline.Flag{Code: roofline.FlagNeverLeft,
			Message: fmt.Sprintf("%d calls entered and never returned from (longjmp, an exception, exit, or running at the end): not in the figures", st.NeverLeft)})
	}
	if c := st.Cost.Call.Seconds(); c > 0 && st.Calls > 0 && st.MeasuredMean < 100*c {
		fl = append(fl, roofline.Flag{Code: roofline.FlagProbeCost,
			Message: fmt.Sprintf("the mean call (%s measured) is shorter than 100 x the probes' cost of %s per call: the times are dominated by the subtracted cost", fmtSeconds(st.MeasuredMean), fmtSeconds(c))})
	}
	if counted && (st.Migrated > 0 || st.Switched > 0) {
		rest := "W and events are extrapolated from the other calls by time"
		if st.CountedSeconds == 0 {
			rest = "no call was left to count, so W and events are unknown (keep other tasks off the target's CPUs, e.g. chrt -f)"
		}
		fl = append(fl, roofline.Flag{Code: roofline.FlagUncountedCalls,
			Message: fmt.Sprintf("%d of %d calls were left out of the counts, as their per-CPU counts include other work: %d returned on another CPU, %d were switched out on their own; %s", st.Migrated+st.Switched, st.Calls, st.Migrated, st.Switched, rest)})
	}
	return fl
}

// resultFlags says what limits all regions of a run.
func resultFlags(res regions.Result) []roofline.Flag {
	var fl []roofline.Flag
	if res.OrphanExits > 0 {
		fl = append(fl, roofline.Flag{Code: roofline.FlagLostRecords,
			Message: fmt.Sprintf("regions: %d returns had no recorded entry (records lost, or calls entered before the probes were attached)", res.OrphanExits)})
	}
	if res.LostMarkers > 0 {
		fl = append(fl, roofline.Flag{Code: roofline.FlagLostRecords,
			Message: fmt.Sprintf("regions: %d LIKWID marker records were dropped (ring buffer full)", res.LostMarkers)})
	}
	return fl
}

func fmtSeconds(s float64) string {
	switch {
	case s >= 1:
		return fmt.Sprintf("%.3g s", s)
	case s >= 1e-3:
		return fmt.Sprintf("%.3g ms", s*1e3)
	}
	return fmt.Sprintf("%.3g µs", s*1e6)
}

// attribute gives function region i the W and Q its function has in the
// backend's table, matched by symbol and file, and W's rate over the
// region's time.
func attribute(r *roofline.Region, st regions.Stats, plan *regionPlan, i, nfun int, funcs []roofline.FunctionCount) []roofline.Flag {
	if i >= nfun {
		return []roofline.Flag{{Code: roofline.FlagMissingCounter,
			Message: "a LIKWID marker region spans code, not a function: the emulated run's W and Q by function do not give it"}}
	}
	p := plan.probes[i]
	for _, f := range funcs {
		if f.Name != p.Spec.Symbol || (f.Object != "" && filepath.Base(f.Object) != filepath.Base(p.Path) && f.Object != p.Path) {
			continue
		}
		r.WorkFlops, r.TrafficBytes = ptr(f.WorkFlops), ptr(f.TrafficBytes)
		r.CountedFraction = 1
		if st.Seconds > 0 {
			r.GFlops = ptr(roofline.Rate(f.WorkFlops, st.Seconds))
		}
		return nil
	}
	return []roofline.Flag{{Code: roofline.FlagMissingCounter,
		Message: "not among the emulated run's functions with at least 0.1% of W or Q (the 25 largest): W and Q unknown"}}
}
