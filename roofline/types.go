package roofline

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Rate is amount per second in the units documents hold rates in: 1e9
// per second (GFLOP/s of FLOP, GB/s of bytes).
func Rate(amount, seconds float64) float64 { return amount / seconds / 1e9 }

// Memory levels, as documents name them: a bandwidth roof's Level, a
// point's LevelBytes keys, a traffic counter's level. A level names the
// memory that serves the traffic: "L2" is traffic between L1 and L2,
// "DRAM" between the last cache and memory. Q, a point's traffic, is the
// DRAM level's.
const (
	LevelL1   = "L1"
	LevelL2   = "L2"
	LevelL3   = "L3"
	LevelDRAM = "DRAM"
)

// Schema versions written. A reader accepts the versions it knows (the
// current ones and those listed below, which it upgrades on reading): a
// document of another version is an error, never a silent misreading.
const (
	PointSchema    = "rprof.point/v2"
	PointSetSchema = "rprof.points/v2"
	RoofsSchema    = "rprof.roofs/v3"
)

// Older schema versions still read. Version 1 points had the binding roof
// as prose ("memory (DRAM)") and flags without a subject; see
// docs/schema-point.md.
const (
	PointSchemaV1    = "rprof.point/v1"
	PointSetSchemaV1 = "rprof.points/v1"
	// RoofsSchemaV1 had no effective cache sizes (Roofs.Caches) and no
	// IntervalUnknown; see docs/schema-roofs.md.
	RoofsSchemaV1 = "rprof.roofs/v1"
	// RoofsSchemaV2 had no GPU roofs (Roofs.GPUs).
	RoofsSchemaV2 = "rprof.roofs/v2"
)

// Sources of a point's W and Q (Point.Source).
const (
	// SourceCounters: W and Q counted by hardware counters.
	SourceCounters = "counters"
	// SourceAnalytic: W and Q given by the user (--work, --traffic); only
	// the time was measured.
	SourceAnalytic = "analytic"
	// SourceEvents: only the user's events were counted; W and Q are
	// unknown.
	SourceEvents = "events"
	// SourceEmulated: W counted by instrumentation under an emulator
	// (rprof run --count emulate), exactly, and Q from a cache model fed
	// by every emulated access (deterministic on one thread only; see
	// Point.ExactTraffic).
	SourceEmulated = "emulated"
	// SourceTimes: only the time was measured, W and Q are unknown (GPU
	// kernels recorded by CUPTI's activity API without counters: rprof
	// run --gpu).
	SourceTimes = "times"
)

// Precision names used in points and roofs.
const (
	Double = "fp64"
	Single = "fp32"
	Half   = "fp16"
	BF16   = "bf16"
	// Mixed is used for work counted on CPUs whose FP event does not tell
	// precisions apart (AMD Zen 2 to Zen 4).
	Mixed = "mixed"
	// Extended is x87 arithmetic, done in 80-bit extended precision
	// (counted by emulation only).
	Extended = "fp80"
)

// ExactWork reports whether p's W is deterministic, so that any change
// between two such points is real: W counted by instrumentation
// (emulated points) is, whatever the threads' interleaving; counters and
// their multiplexing are not.
func (p *Point) ExactWork() bool { return p.Source == SourceEmulated }

// ExactTraffic reports whether p's Q is deterministic: a modelled Q is
// when every process image ran its guest code on one thread at a time.
// With several, each thread has its own modelled caches, so which thread
// touches which data (dynamic scheduling, spin-waits) changes Q from run
// to run. Points that do not record their threads per image (written
// before it was recorded) are not exact.
func (p *Point) ExactTraffic() bool {
	return p.ExactWork() && p.Emulation != nil && p.Emulation.ImageThreads == 1
}

// Interval is a confidence interval [Lo, Hi] around an estimate.
type Interval struct {
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
}

// Machine says where a document was measured.
type Machine struct {
	CPU      CPU    `json:"cpu"`
	Kernel   string `json:"kernel,omitempty"`
	Hostname string `json:"hostname,omitempty"`
	// VM is true when rprof detected a hypervisor.
	VM bool `json:"vm"`
	// Sockets, Cores and Threads count the machine's topology.
	Sockets int `json:"sockets,omitempty"`
	Cores   int `json:"cores,omitempty"`
	Threads int `json:"threads,omitempty"`
}

// CPU identifies the processor the way perf keys its event tables.
type CPU struct {
	Vendor    string `json:"vendor"`
	Family    int    `json:"family"`
	Model     int    `json:"model"`
	Stepping  int    `json:"stepping"`
	ModelName string `json:"model_name,omitempty"`
	Microarch string `json:"microarch"`
	// MicroarchSource says what named Microarch: "model" (family and
	// model) or "features" (the feature flags, where the model is unknown
	// or contradicted by them: a lower bound, "Sapphire Rapids or
	// later"), with MicroarchNote saying why. Empty in documents of rprof
	// before it was recorded, and when Microarch is unknown.
	MicroarchSource string `json:"microarch_source,omitempty"`
	MicroarchNote   string `json:"microarch_note,omitempty"`
}

// MicroarchFromFeatures is MicroarchSource's value for a microarchitecture
// inferred from the feature flags (machine.IdentityFeatures).
const MicroarchFromFeatures = "features"

// MicroarchWords names the microarchitecture for a reader, saying when it
// was inferred from the features rather than the model; "-" when unknown.
func (c CPU) MicroarchWords() string {
	switch {
	case c.Microarch == "":
		return "-"
	case c.MicroarchSource == MicroarchFromFeatures:
		return c.Microarch + " from its features"
	}
	return c.Microarch
}

// Flag is a validity warning carried with a figure and shown as a footnote.
type Flag struct {
	// Code is stable and machine-readable, e.g. "multiplexed", "vm",
	// "above-roof", "no-uncore", "nonzero-exit", "negative-subtraction".
	Code string `json:"code"`
	// Subject is the figure the flag qualifies, machine-readable: one of
	// the Subject constants, or EventSubject(name) for one counter. Empty
	// when the flag concerns the whole document (a VM, an analytic point).
	Subject string `json:"subject,omitempty"`
	Message string `json:"message"`
}

// Subjects of flags: the document field each qualifies.
const (
	SubjectWork    = "work_flops"
	SubjectTraffic = "traffic_bytes"
	SubjectRead    = "read_bytes"
	SubjectWrite   = "write_bytes"
	SubjectSeconds = "seconds"
	// SubjectPlacement: the point's place under the roofs (bound,
	// attainable_gflops, fraction_of_attainable).
	SubjectPlacement = "fraction_of_attainable"
	SubjectExit      = "exit"
	// SubjectRegions: the point's regions, all of them (the notes of the
	// probed run: why W or Q are not counted per region).
	SubjectRegions = "regions"
)

// eventSubjectPrefix starts the subject of a flag about one counter.
const eventSubjectPrefix = "event:"

// EventSubject is the subject of a flag about the counter of that event
// name (EventCount.Name).
func EventSubject(name string) string { return eventSubjectPrefix + name }

// Event returns the event name a flag is about, if it is about one counter.
func (f Flag) Event() (string, bool) { return strings.CutPrefix(f.Subject, eventSubjectPrefix) }

// Flag codes shared by the producers and readers of points.
const (
	FlagMultiplexed    = "multiplexed"
	FlagMissingCounter = "missing-counter"
	FlagNoUncore       = "no-uncore"
	FlagAboveRoof      = "above-roof"
	FlagNonzeroExit    = "nonzero-exit"
	FlagSignaled       = "signaled"
	// FlagInterrupted: rprof was interrupted (SIGINT, SIGTERM) while
	// measuring; the point holds the repetitions that ended, the last
	// perhaps cut short.
	FlagInterrupted = "interrupted"
	FlagVM          = "vm"
	FlagNegative    = "negative-subtraction"
	FlagBelowNoise  = "below-noise"
	FlagAnalytic    = "analytic"
	FlagUnverified  = "unverified-event"
	// FlagUserOnly: per-process counters counted user mode only, because
	// perf_event_paranoid refused kernel-mode counting (perf stat's ":u"
	// fallback).
	FlagUserOnly = "user-mode-only"
	// FlagEmulatedISA: W and Q were counted under emulation of a narrower
	// ISA than this CPU's, so the timed native runs may take other code
	// paths than the counted one.
	FlagEmulatedISA = "emulated-isa"
	// FlagModelled: Q comes from a cache model, not from counters.
	FlagModelled = "modelled-traffic"
	// FlagNotModelled: an emulated run without a cache model
	// (--cache-model none): Q was not modelled, by request.
	FlagNotModelled = "not-modelled"
	// FlagNotCounted: programs the target exec'd ran without being counted.
	FlagNotCounted = "children-not-counted"
	// FlagInterleaved: a modelled Q of a run with several threads at once,
	// which depends on their interleaving (each thread has its own
	// modelled caches), so it differs between identical runs.
	FlagInterleaved = "interleaved-threads"
	// Flags of modelled (analytic) W and Q, e.g. oneDNN primitives:
	// FlagApproximate, a formula with estimated constants; FlagNoFormula,
	// no model (time only); FlagPadded, a blocked layout pads a tensor;
	// FlagPaddingTaps, a convolution's taps on zero padding; FlagSkipped,
	// trace lines that did not parse.
	FlagApproximate = "approximate-formula"
	FlagNoFormula   = "no-formula"
	FlagPadded      = "padded-layout"
	FlagPaddingTaps = "padding-taps"
	FlagSkipped     = "skipped-lines"
	// Flags of counts put beside analytic W and Q (rprof dnn --count):
	// FlagCountedGap, counted and analytic differ by more than the
	// documented ratio; FlagOverlappedCalls, calls of two threads
	// overlapped, so their counts were left out; FlagCallMismatch, the
	// counted calls and the trace's executions differ in number, so no
	// count is attributed; FlagCountedOther, the counted run executed
	// another implementation or layout than the timed one; FlagUncounted,
	// no counted call matches the group.
	FlagCountedGap      = "counted-gap"
	FlagOverlappedCalls = "overlapped-calls"
	FlagCallMismatch    = "call-mismatch"
	FlagCountedOther    = "counted-other-implementation"
	FlagUncounted       = "not-counted"
	// FlagOutlived: processes the target started were still running when
	// it exited; what they did afterwards is not in the point.
	FlagOutlived = "children-outlived"
	// FlagStdinOnce: standard input was a pipe or file, which only the
	// first of several runs (repetitions, overhead runs) could read.
	FlagStdinOnce = "stdin-once"
	// FlagBusyMachine: the machine had less than half a CPU idle while the
	// target ran, so its parallelism (CPU time over wall time) may be
	// below the threads it ran, and the thread scope it chose too small.
	FlagBusyMachine = "busy-machine"
	// FlagWideTime: the confidence interval of the mean time is wide
	// against the mean (measure's threshold), so the rates and the place
	// under the roofs are uncertain by as much.
	FlagWideTime = "wide-time-interval"
)

// Point is one measured (or analytic) roofline point: the document written by
// `rprof run --json`.
type Point struct {
	Schema  string    `json:"schema"`
	Label   string    `json:"label"`
	Command []string  `json:"command"`
	Created time.Time `json:"created"`
	// Source says how W and Q were obtained: SourceCounters,
	// SourceAnalytic, SourceEmulated, SourceEvents or SourceTimes.
	Source string `json:"source"`

	// WorkFlops is W, floating-point operations, after overhead subtraction
	// (median over repetitions). Nil when unknown.
	WorkFlops *float64 `json:"work_flops"`
	// WorkByPrecision splits W where the CPU's events allow.
	WorkByPrecision map[string]float64 `json:"work_by_precision,omitempty"`
	// TrafficBytes is Q, DRAM bytes read plus written (median). Nil when
	// unknown (no uncore access).
	TrafficBytes *float64 `json:"traffic_bytes"`
	ReadBytes    *float64 `json:"read_bytes"`
	WriteBytes   *float64 `json:"write_bytes"`

	// Seconds is the mean wall time T of the target, after overhead
	// subtraction.
	Seconds float64 `json:"seconds"`
	// CI holds the confidence intervals of the timed figures.
	CI Uncertainty `json:"ci"`

	// Derived figures; nil when an input is unknown.
	Intensity  *float64 `json:"intensity"`    // FLOP/byte
	GFlops     *float64 `json:"gflops"`       // 1e9 FLOP/s
	GBytesPerS *float64 `json:"gbytes_per_s"` // 1e9 B/s

	// Placement under the roofs, when a roofs document was available.
	Bound                *Bound   `json:"bound,omitempty"`
	AttainableGFlops     *float64 `json:"attainable_gflops"`
	FractionOfAttainable *float64 `json:"fraction_of_attainable"`
	RoofsFile            string   `json:"roofs_file,omitempty"`
	// Threads is the thread scope whose roofs were used, and ThreadsRule
	// the rule of ThreadScope that chose it (ScopeRule*; empty in points
	// of rprof before it was recorded).
	Threads     int    `json:"threads,omitempty"`
	ThreadsRule string `json:"threads_rule,omitempty"`
	// CPUSeconds is the mean CPU time (user plus system) of the target
	// and the children it waited for, per run, and Parallelism that CPU
	// time over the runs' wall time: how many CPUs the program kept busy
	// on average (before overhead subtraction). 0 when not measured.
	CPUSeconds  float64 `json:"cpu_seconds,omitempty"`
	Parallelism float64 `json:"parallelism,omitempty"`

	// Levels is the traffic between each pair of adjacent memory levels,
	// from the core down to DRAM (emulated points, from the cache model).
	Levels []LevelTraffic `json:"levels,omitempty"`
	// Functions are the functions doing the most work or traffic
	// (emulated points), most FLOPs first.
	Functions []FunctionCount `json:"functions,omitempty"`
	// Emulation says how an emulated point was counted.
	Emulation *Emulation `json:"emulation,omitempty"`
	// Analytic holds the modelled W and Q of a point whose W and Q were
	// counted beside a model (rprof dnn --count); nil otherwise.
	Analytic *AnalyticFigures `json:"analytic,omitempty"`

	Events []EventCount `json:"events"`
	// Regions are the probed functions (`--region`), each its own point.
	Regions  []Region  `json:"regions,omitempty"`
	Overhead *Overhead `json:"overhead,omitempty"`
	Samples  Samples   `json:"samples"`
	Exit     Exit      `json:"exit"`
	Flags    []Flag    `json:"flags"`
	Machine  Machine   `json:"machine"`

	// Rank places the point in a parallel job (rprof run under mpirun or
	// srun); nil outside one. Job describes a job point made by cluster.Merge.
	Rank *Rank `json:"rank,omitempty"`
	Job  *Job  `json:"job,omitempty"`
	// GPU says which GPU kernel the point is (rprof import ncu); nil for
	// a program on the CPU.
	GPU *GPUKernel `json:"gpu,omitempty"`
}

// LevelTraffic is the traffic between a memory level and the one below it:
// Read is what the upper level loaded from the lower, Write what it wrote
// back (or stored around it, for non-temporal stores to DRAM).
type LevelTraffic struct {
	Upper      string  `json:"upper"` // "core", "L1", "L2", "L3"
	Lower      string  `json:"lower"` // "L1", "L2", "L3", LevelDRAM
	ReadBytes  float64 `json:"read_bytes"`
	WriteBytes float64 `json:"write_bytes"`
	// Intensity is W over this level's read plus written bytes (the
	// cache-aware roofline's intensity at this level).
	Intensity *float64 `json:"intensity"`
}

// FunctionCount is the work and DRAM traffic of one function of the
// target, with its own intensity.
type FunctionCount struct {
	Name string `json:"name"`
	// Object is the file holding the function; empty for buckets such as
	// "[jit]".
	Object       string  `json:"object,omitempty"`
	WorkFlops    float64 `json:"work_flops"`
	TrafficBytes float64 `json:"traffic_bytes"`
	// CoreBytes are the bytes its instructions loaded and stored.
	CoreBytes float64  `json:"core_bytes"`
	Intensity *float64 `json:"intensity"`
}

// AnalyticFigures are a point's W and Q from a model (rprof dnn: from the
// oneDNN problem descriptor), kept beside counted ones.
type AnalyticFigures struct {
	WorkFlops    *float64 `json:"work_flops"`
	TrafficBytes *float64 `json:"traffic_bytes"`
	// WorkRatio and TrafficRatio are the point's counted W and Q over
	// these; nil when either is unknown or the analytic one is 0.
	WorkRatio    *float64 `json:"work_ratio"`
	TrafficRatio *float64 `json:"traffic_ratio"`
}

// Emulation describes how an emulated point was counted.
type Emulation struct {
	// Emulator names the emulator and its version ("qemu-x86_64 7.2.22").
	Emulator  string `json:"emulator"`
	PluginAPI int    `json:"plugin_api"`
	// ISA is the instruction set the emulator offered the target.
	ISA string `json:"isa"`
	// CPU is the processor the emulator presented (nil in points of rprof
	// before it was recorded: QEMU's default model).
	CPU *EmulatedCPU `json:"cpu,omitempty"`
	// CacheModel is the simulated hierarchy in --cache-model syntax, and
	// CacheModelSource where its sizes came from.
	CacheModel       string `json:"cache_model"`
	CacheModelSource string `json:"cache_model_source"`
	// WorkByWidth splits W by instruction width: scalar, 128, 256, x87.
	WorkByWidth map[string]float64 `json:"work_by_width,omitempty"`
	// Images counts the process images counted (the target, forked
	// children, followed execs); Threads their guest threads (thread
	// slots, summed over the images). ImageThreads is the most thread
	// slots one image used: 1 when each image ran its guest code on one
	// thread at a time, the condition of a deterministic Q (0: not
	// recorded).
	Images       int `json:"images"`
	Threads      int `json:"threads"`
	ImageThreads int `json:"image_threads,omitempty"`
	// EnvironmentBytes is the size of the argument and environment block
	// the target started with (strings and pointers): the most a modelled
	// Q may differ by between runs in different environments
	// (docs/emulate.md); 0 when not recorded.
	EnvironmentBytes int64 `json:"environment_bytes,omitempty"`
	// Seconds is the wall time of the emulated run (the point's T comes
	// from native runs).
	Seconds float64 `json:"seconds"`
	// Calls is the number of calls whose counts give W and Q, and
	// CountedAs what they executed when it differs from the timed run
	// (rprof dnn: the oneDNN implementation and layouts); empty for a
	// whole-program point.
	Calls     int    `json:"calls,omitempty"`
	CountedAs string `json:"counted_as,omitempty"`
}

// Uncertainty describes the confidence intervals of a point.
type Uncertainty struct {
	Confidence float64 `json:"confidence"`
	// Method names how the interval was computed, e.g. "student-t",
	// "normal", "order-statistic".
	Method     string    `json:"method"`
	N          int       `json:"n"`
	Seconds    Interval  `json:"seconds"`
	GFlops     *Interval `json:"gflops,omitempty"`
	GBytesPerS *Interval `json:"gbytes_per_s,omitempty"`
}

// Samples keeps the per-repetition values, so that comparisons can test
// significance on the raw data.
type Samples struct {
	Seconds      []float64 `json:"seconds"`
	WorkFlops    []float64 `json:"work_flops,omitempty"`
	TrafficBytes []float64 `json:"traffic_bytes,omitempty"`
}

// EventCount is one counter's reading, summed over repetitions' medians.
type EventCount struct {
	Name string `json:"name"`
	PMU  string `json:"pmu,omitempty"`
	// Value is the count scaled for multiplexing (Raw * Enabled / Running).
	Value   float64 `json:"value"`
	Raw     uint64  `json:"raw"`
	Enabled uint64  `json:"time_enabled_ns"`
	Running uint64  `json:"time_running_ns"`
	Unit    string  `json:"unit,omitempty"`
}

// Overhead records what was subtracted from the kernel run.
type Overhead struct {
	Command      []string `json:"command,omitempty"`
	WorkFlops    *float64 `json:"work_flops,omitempty"`
	TrafficBytes *float64 `json:"traffic_bytes,omitempty"`
	Seconds      float64  `json:"seconds"`
	// IdleBytesPerS is the background DRAM rate measured before the run;
	// IdleBytesPerS * T was subtracted from Q.
	IdleBytesPerS *float64 `json:"idle_bytes_per_s,omitempty"`
	// Events are the overhead runs' counts (medians), subtracted from the
	// point's events.
	Events []EventCount `json:"events,omitempty"`
}

// Exit is how the target ended.
type Exit struct {
	Code   int    `json:"code"`
	Signal string `json:"signal,omitempty"`
}

// PointSet is a file holding several labelled points.
type PointSet struct {
	Schema string  `json:"schema"`
	Points []Point `json:"points"`
}

// EmulatedCPU is the processor an emulated run presented to the target:
// what runtime dispatch (OpenBLAS, BLIS, oneDNN) chose its code by.
type EmulatedCPU struct {
	// QEMUOption is QEMU's -cpu value; Source is "host" (this machine's
	// identity on QEMU's max feature set) or "flag" (--emulate-cpu).
	QEMUOption string `json:"qemu_option"`
	Source     string `json:"source"`
	// Vendor, Family, Model, Stepping and Brand are the identity presented
	// (absent for a named QEMU model, which has its own).
	Vendor   string `json:"vendor,omitempty"`
	Family   int    `json:"family,omitempty"`
	Model    int    `json:"model,omitempty"`
	Stepping int    `json:"stepping,omitempty"`
	Brand    string `json:"brand,omitempty"`
	// Off are QEMU features turned off because the host lacks them;
	// NotEmulated the host's vector features no QEMU emulates (AVX-512).
	Off         []string `json:"off,omitempty"`
	NotEmulated []string `json:"not_emulated,omitempty"`
}

// Roofs is the document written by `rprof roofs`.
type Roofs struct {
	Schema    string          `json:"schema"`
	Created   time.Time       `json:"created"`
	Machine   Machine         `json:"machine"`
	Compute   []ComputeRoof   `json:"compute"`
	Bandwidth []BandwidthRoof `json:"bandwidth"`
	DGEMM     *DGEMM          `json:"dgemm,omitempty"`
	Tuning    Tuning          `json:"tuning"`
	Flags     []Flag          `json:"flags,omitempty"`
	// CacheSource says where the cache levels' sizes came from, in level
	// order without repeats: "sysfs", "cpuid", "measured", or a
	// combination such as "cpuid+measured" (each bandwidth roof says its
	// own).
	CacheSource string `json:"cache_source,omitempty"`
	// Caches are the effective size of each cache level for each thread
	// scope measured: what the sweep's edges showed, or the declared size
	// where the sweep confirmed it or showed no edge. Everything that
	// needs level sizes reads these (CacheLevels), not the host's
	// declaration.
	Caches []CacheLevel `json:"caches,omitempty"`
	// GPUs are the GPUs' roofs (rprof roofs --gpu), one per device.
	GPUs []GPURoofs `json:"gpus,omitempty"`
}

// CacheLevel is the effective size of one cache level as one thread
// scope's threads see it together (per-core levels summed over the
// scope's cores).
type CacheLevel struct {
	Level   string `json:"level"` // L1, L2, L3
	Threads int    `json:"threads"`
	Bytes   int64  `json:"bytes"`
	// Source is CacheSourceMeasured when the sweep's edge gave Bytes
	// (the declared size disagreed, or there was none), else the
	// declared size's source (sysfs, cpuid).
	Source string `json:"source"`
	// Edge brackets where the sweep's bandwidth fell past the level: the
	// largest working set still at the level's rate and the next one;
	// nil when the sweep showed no edge.
	Edge *ByteRange `json:"edge,omitempty"`
	// DeclaredBytes and DeclaredSource are what the host declared for
	// the level (sysfs, CPUID); absent when it declared nothing.
	DeclaredBytes  int64  `json:"declared_bytes,omitempty"`
	DeclaredSource string `json:"declared_source,omitempty"`
}

// UnknownUncertainty is how a figure whose interval is unknown
// (IntervalUnknown) is shown: its samples' range, never a "±0%".
func UnknownUncertainty(ci Interval) string {
	return fmt.Sprintf("uncertainty unknown (samples %s to %s)", strconv.FormatFloat(ci.Lo, 'g', 4, 64), strconv.FormatFloat(ci.Hi, 'g', 4, 64))
}

// ByteRange is a range of sizes in bytes, [Lo, Hi].
type ByteRange struct {
	Lo int64 `json:"lo"`
	Hi int64 `json:"hi"`
}

// CacheLevels returns the effective cache levels of the scope of threads
// threads, smallest first; nil when the document has none for it.
func (r *Roofs) CacheLevels(threads int) []CacheLevel {
	var out []CacheLevel
	for _, c := range r.Caches {
		if c.Threads == threads {
			out = append(out, c)
		}
	}
	slices.SortStableFunc(out, func(a, b CacheLevel) int { return cmp.Compare(a.Bytes, b.Bytes) })
	return out
}

// ComputeRoof is a measured floating-point ceiling.
type ComputeRoof struct {
	Name      string   `json:"name"`      // e.g. "avx512-fma-fp64"
	ISA       string   `json:"isa"`       // scalar, sse, avx2, avx512
	Precision string   `json:"precision"` // fp64, fp32
	Threads   int      `json:"threads"`
	GFlops    float64  `json:"gflops"`
	CI        Interval `json:"ci"`
	// IntervalUnknown: too few samples for an interval at the confidence
	// asked; CI is the samples' range and the uncertainty is unknown.
	IntervalUnknown   bool    `json:"interval_unknown,omitempty"`
	TheoreticalGFlops float64 `json:"theoretical_gflops,omitempty"`
	FrequencyGHz      float64 `json:"frequency_ghz,omitempty"`
	// Kind is "" for rprof's own kernels and ComputeKindLibrary for a
	// library routine's ceiling, whose Library says what ran.
	Kind    string       `json:"kind,omitempty"`
	Library *LibraryCall `json:"library,omitempty"`
}

// ComputeKindLibrary marks a compute roof measured through a library
// routine (a oneDNN primitive): a ceiling for code that calls that routine
// on that problem, not the machine's peak, so PeakCompute passes it over.
const ComputeKindLibrary = "library"

// LibraryCall is what a library roof ran: the library and its version,
// the routine, the implementation the library chose, and the problem.
type LibraryCall struct {
	Name    string `json:"name"`    // "oneDNN"
	Version string `json:"version"` // "v2.6.3"
	// Runtime is the library's threading runtime ("OpenMP").
	Runtime string `json:"runtime,omitempty"`
	// Primitive is the routine's kind ("convolution"), Implementation
	// the code path the library chose ("jit:avx512_core").
	Primitive      string `json:"primitive"`
	Implementation string `json:"implementation"`
	// Problem is the problem in the library's own grammar (oneDNN's
	// verbose problem descriptor), Layout the activations' format tag.
	Problem string `json:"problem"`
	Layout  string `json:"layout,omitempty"`
	// WorkFlops is one call's analytic work, the numerator of the rate.
	WorkFlops float64 `json:"work_flops"`
	// LibraryThreads is the thread count the library reported using.
	LibraryThreads int    `json:"library_threads,omitempty"`
	Flags          []Flag `json:"flags,omitempty"`
}

// BandwidthRoof is a measured memory-level ceiling.
type BandwidthRoof struct {
	Level      string   `json:"level"`  // L1, L2, L3, DRAM
	Kernel     string   `json:"kernel"` // triad, triad-nt, load
	Threads    int      `json:"threads"`
	GBytesPerS float64  `json:"gbytes_per_s"`
	CI         Interval `json:"ci"`
	// IntervalUnknown: as ComputeRoof's.
	IntervalUnknown bool  `json:"interval_unknown,omitempty"`
	WorkingSetBytes int64 `json:"working_set_bytes"`
	// LevelBytes is the cache level's effective capacity for the roof's
	// threads together, and LevelSource where it came from
	// (CacheSource*), as in Roofs.Caches; both absent for DRAM.
	LevelBytes  int64  `json:"level_bytes,omitempty"`
	LevelSource string `json:"level_source,omitempty"`
}

// Sources of cache sizes: the kernel's sysfs cache tree, the CPUID
// instruction, or the edges of the bandwidth sweep.
const (
	CacheSourceSysfs    = "sysfs"
	CacheSourceCPUID    = "cpuid"
	CacheSourceMeasured = "measured"
)

// DGEMM is the vendor-BLAS matrix-multiply roof.
type DGEMM struct {
	Library  string   `json:"library"`
	Version  string   `json:"version,omitempty"`
	CoreName string   `json:"corename,omitempty"`
	N        int      `json:"n"`
	M        int      `json:"m"`
	K        int      `json:"k"`
	Threads  int      `json:"threads"`
	GFlops   float64  `json:"gflops"`
	CI       Interval `json:"ci"`
	// IntervalUnknown: as ComputeRoof's.
	IntervalUnknown bool   `json:"interval_unknown,omitempty"`
	Flags           []Flag `json:"flags,omitempty"`
}

// Step is how long one step of a part of a roofs run took: Part is a key
// of Tuning.PartSeconds ("setup" for what precedes the parts), Name says
// what the step did ("1 thread placing 1 GiB": first-touching the operands
// of a sweep up to 1 GiB).
type Step struct {
	Part    string  `json:"part"`
	Name    string  `json:"name"`
	Seconds float64 `json:"seconds"`
}

// Tuning summarises the autotuning search.
type Tuning struct {
	Seconds float64 `json:"seconds"`
	// PartSeconds splits Seconds by part: "compute", "dgemm" and
	// "bandwidth".
	PartSeconds map[string]float64 `json:"part_seconds,omitempty"`
	// Steps split the parts further, in the order they ran.
	Steps          []Step         `json:"steps,omitempty"`
	Configurations int            `json:"configurations"`
	Evaluations    int            `json:"evaluations"`
	StopReasons    map[string]int `json:"stop_reasons,omitempty"`
	Method         string         `json:"method,omitempty"`
}
