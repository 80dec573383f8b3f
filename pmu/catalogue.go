package pmu

// The catalogue: for each microarchitecture (named as perf names its event
// directories), the events that count floating-point work and DRAM traffic.
// It is plain data; NewPlan resolves it against the PMUs a machine exposes.
// The facts come from Intel's perfmon JSON, the kernel's perf event JSON and
// uncore drivers, and LIKWID's groups; each entry names its source, and an
// entry whose weight or encoding those sources do not confirm says why in
// Unverified.

// Core types a work event targets on hybrid Intel parts. On other CPUs every
// work event is for the one core PMU.
const (
	coreAny      = ""             // the core PMU of a non-hybrid CPU ("cpu" or the Arm PMU)
	coreP        = "cpu_core"     // hybrid P-cores
	coreE        = "cpu_atom"     // hybrid E-cores
	coreLowPower = "cpu_lowpower" // Arrow Lake LP E-cores
)

// workSpec is one FP-work event of the catalogue.
type workSpec struct {
	// Core is the hybrid core PMU the event belongs to (coreAny elsewhere).
	Core string
	// Name is the vendor's event name.
	Name string
	// Terms is the encoding in perf's term syntax, resolved with the core
	// PMU's format files.
	Terms     string
	Flops     float64
	Precision string
	// Slots is how many general counters the event takes (AMD FP events use
	// a counter pair; 0 means 1).
	Slots      int
	Source     string
	Unverified string
}

// trafficSpec is one DRAM-traffic event, opened on every box of one PMU
// kind (one PMU per memory controller).
type trafficSpec struct {
	// PMU selects the boxes as PMUs.Glob does: the PMU named PMU, or PMU_N.
	PMU string
	// Name is what rprof calls the event: the kernel alias when one exists.
	Name string
	// Aliases are sysfs event names that count this event, best first. An
	// alias is used only when it encodes the same as Terms: a kernel whose
	// alias encodes something else is known to be wrong (see the ICX CAS
	// umask fix) and the raw encoding is used instead.
	Aliases   []string
	Terms     string
	Bytes     float64
	Direction string
	Source    string
	// Missing explains, when no alias exists, why the raw encoding is added;
	// it becomes a problem shown to the user.
	Missing    string
	Unverified string
}

// trafficSet is one way to count DRAM traffic on a microarchitecture; the
// first set whose PMUs exist is used.
type trafficSet struct {
	Events []trafficSpec
	// Note is shown with the set (e.g. a counting limitation).
	Note string
}

// archSpec is the catalogue entry for one microarchitecture.
type archSpec struct {
	Microarch string
	Work      []workSpec
	// NoWork explains why work cannot be counted (or is partly unmeasured,
	// e.g. hybrid E-cores without an FP event).
	NoWork []Problem
	// Counters is the number of general counters one thread has for work
	// events, with SMT on; CountersNoSMT when SMT is off (0: same).
	Counters      int
	CountersNoSMT int
	Traffic       []trafficSet
	// NoTraffic explains why no DRAM-traffic PMU is catalogued.
	NoTraffic *Problem
}

// Byte weights and the sources they come from.
const (
	casBytes = 64 // one CAS moves one 64-byte line: kernel scale 6.103515625e-5 MiB = 64/2^20

	srcPerfmon   = "Intel perfmon JSON"
	srcUncoreSNB = "Linux arch/x86/events/intel/uncore_snbep.c"
	srcUncoreCli = "Linux arch/x86/events/intel/uncore_snb.c"
	srcAMDJSON   = "Linux tools/perf/pmu-events/arch/x86 AMD JSON"
	srcAMDUncore = "Linux arch/x86/events/amd/uncore.c"
	srcLIKWID    = "LIKWID groups"
	srcArmJSON   = "Linux tools/perf/pmu-events/arch/arm64 JSON"
)

// catalogue returns the entry for microarch, or false when rprof has none.
func catalogue(microarch string) (archSpec, bool) {
	for _, a := range catalogueEntries() {
		if a.Microarch == microarch {
			return a, true
		}
	}
	return archSpec{}, false
}

// catalogueEntries lists every supported microarchitecture.
func catalogueEntries() []archSpec {
	var all []archSpec
	all = append(all, intelEntries()...)
	all = append(all, amdEntries()...)
	all = append(all, armEntries()...)
	return all
}

// Microarchs lists the microarchitectures the catalogue covers, in catalogue
// order.
func Microarchs() []string {
	var names []string
	for _, a := range catalogueEntries() {
		names = append(names, a.Microarch)
	}
	return names
}
