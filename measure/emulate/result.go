package emulate

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/rprof/rprof/roofline"
)

// Precisions the plugin counts, in its output order.
var Precisions = []string{roofline.Double, roofline.Single, roofline.Half, roofline.BF16, roofline.Extended}

// Result is what an emulated run counted, summed over its processes,
// threads and followed execs.
type Result struct {
	// Work is FLOPs by precision (fp64, fp32, fp16, bf16, fp80 for x87),
	// only the precisions that did any.
	Work map[string]uint64
	// WorkByWidth is FLOPs by instruction width: "scalar", "128", "256"
	// (SSE/AVX vectors) and "x87".
	WorkByWidth map[string]uint64
	// Core is the bytes instructions loaded and stored (the traffic
	// between the core and L1).
	Core Traffic
	// Levels is the modelled traffic between each pair of adjacent levels,
	// from L1-L2 down to the last level and DRAM; empty without a model.
	Levels []LevelTraffic
	// NonTemporal is the bytes written by non-temporal stores, which
	// bypass the caches (included in the DRAM row's writes).
	NonTemporal uint64
	// Model is the cache model that was simulated.
	Model CacheModel
	// Images counts the process images counted: the target, each forked
	// child and each followed exec.
	Images int
	// Threads sums the thread slots (vCPUs) every image used: QEMU reuses
	// the slot of a thread that ended, so this is at least the most
	// threads alive at once.
	Threads int
	// ImageThreads is the most thread slots one image used: 1 when every
	// image ran its guest code on one thread at a time, so that its cache
	// model saw one order of accesses and Q repeats exactly.
	ImageThreads int
	// NotCounted lists programs the target exec'd that ran natively,
	// uncounted (not x86-64, or not readable).
	NotCounted []string
	// SharedSlot is set when more threads were alive at once than the
	// plugin has per-thread slots: some counts raced.
	SharedSlot bool
	// Functions is work and traffic by function, most FLOPs first.
	Functions []Function
	// Unattributed is set when guest addresses could not be mapped to
	// files (functions are then unknown).
	Unattributed bool
	// Calls are the counted calls of the function Session.CountCalls
	// named, in the order they returned. CallImages is the number of
	// process images that made calls (calls of several images have no
	// order between them: they are listed image after image), and
	// CallMapped whether any image had the function's library mapped.
	Calls      []Call
	CallImages int
	CallMapped bool
}

// Call is what one call of a counted function did, over all threads from
// its entry to its return: the work of the OpenMP workers it woke is in.
type Call struct {
	// Thread is the vCPU (thread slot) that made the call.
	Thread int
	// Overlapped is set when another thread's call of the function ran
	// during this one: each one's counts hold both.
	Overlapped bool
	// Work is FLOPs by precision, every precision of Precisions.
	Work map[string]uint64
	// DRAM is the modelled DRAM traffic during the call: last-level
	// misses and the write-backs (and non-temporal stores) that happened
	// then. Lines the call left dirty are written back, and counted, when
	// they are evicted later.
	DRAM Traffic
	// Core is the bytes every thread loaded and stored during the call
	// (with OpenMP workers' spin-waiting).
	Core Traffic
}

// Flops is the call's W over every precision.
func (c Call) Flops() uint64 { return sumWork(c.Work) }

// sumWork adds FLOPs of every precision.
func sumWork(work map[string]uint64) uint64 {
	var n uint64
	for _, v := range work {
		n += v
	}
	return n
}

// Traffic is bytes in each direction.
type Traffic struct {
	Read, Write uint64
}

// Total is read plus written bytes.
func (t Traffic) Total() uint64 { return t.Read + t.Write }

// LevelTraffic is the traffic between an upper level and the one below:
// Read is lines filled into Upper, Write is dirty lines written back (and,
// for DRAM, non-temporal stores).
type LevelTraffic struct {
	Upper, Lower string
	Traffic
}

// Function is the work and traffic of one function.
type Function struct {
	Name   string // symbol, or a bucket: "[jit]", "[vdso]", "[unattributed]", "[unknown]"
	Object string // the file it lives in ("" for buckets)
	Flops  uint64
	// DRAM is the modelled DRAM bytes of the function's own accesses
	// (misses of the last level and write-backs of the lines they evict).
	DRAM uint64
	// Core is the bytes its instructions loaded and stored.
	Core uint64
}

// Flops is W: all FLOPs of every precision.
func (r Result) Flops() uint64 { return sumWork(r.Work) }

// DRAM is the modelled traffic between the last level and DRAM (Q), and
// whether there is a model.
func (r Result) DRAM() (Traffic, bool) {
	if len(r.Levels) == 0 {
		return Traffic{}, false
	}
	return r.Levels[len(r.Levels)-1].Traffic, true
}

// ErrNoOutput: the plugin wrote nothing (the emulator failed to start or
// was killed).
var ErrNoOutput = errors.New("the emulator wrote no counts")

// image is one process image's output file.
type image struct {
	pid, gen  int
	exe, exec string
	hostAddrs bool
	vcpus     int
	overflow  bool
	line      int
	levels    []levelCount
	core      Traffic
	nt        uint64
	dram      Traffic
	flops     map[string]uint64
	widths    map[string]uint64
	blocks    []block
	maps      []mapping
	// callMapped is set when the counted function's library was mapped
	// (a "callfn" line with a non-zero address).
	callMapped bool
	calls      []Call
	sawEnd     bool
}

type levelCount struct {
	name              string
	size              int64
	ways              int
	fills, writebacks uint64
}

type block struct {
	vaddr, execs, dram, core uint64
	flops                    [5]uint64
}

type mapping struct {
	lo, hi, off uint64
	perms, path string
}

func readResult(dir string, m CacheModel) (Result, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil {
		return Result{}, err
	}
	var imgs []*image
	for _, n := range names {
		if strings.HasPrefix(filepath.Base(n), "disas.") {
			continue
		}
		img, err := readImage(n)
		if err != nil {
			return Result{}, err
		}
		imgs = append(imgs, img)
	}
	if len(imgs) == 0 {
		return Result{}, ErrNoOutput
	}
	return combine(imgs, m), nil
}

func readImage(name string) (*image, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	img := &image{flops: map[string]uint64{}, widths: map[string]uint64{}}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	first := true
	for sc.Scan() {
		line := sc.Text()
		if first {
			if line != "rprof-emulate 1" {
				return nil, fmt.Errorf("emulate: %s: not a plugin output of this rprof (%q)", filepath.Base(name), line)
			}
			first = false
			continue
		}
		key, rest, _ := strings.Cut(line, " ")
		if !img.readLine(key, rest) {
			return nil, fmt.Errorf("emulate: %s: unreadable line %q", filepath.Base(name), line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if !img.sawEnd {
		return nil, fmt.Errorf("emulate: %s: truncated plugin output", filepath.Base(name))
	}
	return img, nil
}

// readLine applies one line of plugin output (after the header), split
// into its key and the rest, to img; false means the line is malformed.
// On false img may be partly updated: readImage then discards it.
func (img *image) readLine(key, rest string) bool {
	f := strings.Fields(rest)
	switch key {
	case "api":
	case "pid", "gen", "vcpus", "overflow", "line", "host_addrs":
		return img.readScalar(key, f)
	case "exe":
		img.exe = rest
	case "exec":
		img.exec = rest
	case "level":
		return img.readLevel(f)
	case "core", "dram":
		return img.readTraffic(key, f)
	case "nt":
		v, ok := parseUints(f, 1, 10)
		if ok {
			img.nt = v[0]
		}
		return ok
	case "tb":
		return img.readBlock(f)
	case "flops", "widths":
		return img.readCounts(key, f)
	case "map":
		return img.readMap(f)
	case "callfn":
		v, ok := parseUints(f, 1, 16)
		img.callMapped = ok && v[0] != 0
		return ok
	case "call":
		return img.readCall(f)
	case "end":
		img.sawEnd = true
	default:
		return false
	}
	return true
}

// parseUints parses the first want fields of f in base. Fields beyond
// them are ignored, as they always were, so a newer plugin may append some.
func parseUints(f []string, want, base int) ([]uint64, bool) {
	if len(f) < want {
		return nil, false
	}
	out := make([]uint64, want)
	for i := 0; i < want; i++ {
		v, err := strconv.ParseUint(f[i], base, 64)
		if err != nil {
			return nil, false
		}
		out[i] = v
	}
	return out, true
}

// readScalar reads a line "key N" of one decimal number.
func (img *image) readScalar(key string, f []string) bool {
	v, ok := parseUints(f, 1, 10)
	if !ok {
		return false
	}
	switch key {
	case "pid":
		img.pid = int(v[0])
	case "gen":
		img.gen = int(v[0])
	case "vcpus":
		img.vcpus = int(v[0])
	case "overflow":
		img.overflow = v[0] != 0
	case "line":
		img.line = int(v[0])
	case "host_addrs":
		img.hostAddrs = v[0] != 0
	}
	return true
}

// readLevel reads "level NAME SIZE WAYS FILLS WRITEBACKS".
func (img *image) readLevel(f []string) bool {
	if len(f) != 5 {
		return false
	}
	v, ok := parseUints(f[1:], 4, 10)
	if !ok {
		return false
	}
	img.levels = append(img.levels, levelCount{name: f[0], size: int64(v[0]), ways: int(v[1]), fills: v[2], writebacks: v[3]})
	return true
}

// readTraffic reads "core READ WRITE" or "dram READ WRITE".
func (img *image) readTraffic(key string, f []string) bool {
	v, ok := parseUints(f, 2, 10)
	if !ok {
		return false
	}
	t := Traffic{Read: v[0], Write: v[1]}
	if key == "core" {
		img.core = t
	} else {
		img.dram = t
	}
	return true
}

// readBlock reads "tb VADDR(hex) EXECS DRAM CORE FLOPS×5", one translated
// block's counts.
func (img *image) readBlock(f []string) bool {
	if len(f) != 9 {
		return false
	}
	a, err := strconv.ParseUint(f[0], 16, 64)
	if err != nil {
		return false
	}
	v, ok := parseUints(f[1:], 8, 10)
	if !ok {
		return false
	}
	b := block{vaddr: a, execs: v[0], dram: v[1], core: v[2]}
	copy(b.flops[:], v[3:])
	img.blocks = append(img.blocks, b)
	return true
}

// readCounts reads "flops K=V ..." or "widths K=V ...".
func (img *image) readCounts(key string, f []string) bool {
	for _, kv := range f {
		k, vs, ok := strings.Cut(kv, "=")
		v, err := strconv.ParseUint(vs, 10, 64)
		if !ok || err != nil {
			return false
		}
		if key == "flops" {
			img.flops[k] = v
		} else {
			img.widths[k] = v
		}
	}
	return true
}

// readMap reads "map LO HI OFF PERMS PATH", numbers in hex, PATH possibly
// with spaces.
func (img *image) readMap(f []string) bool {
	if len(f) < 5 {
		return false
	}
	v, ok := parseUints(f, 3, 16)
	if !ok {
		return false
	}
	img.maps = append(img.maps, mapping{lo: v[0], hi: v[1], off: v[2], perms: f[3], path: strings.Join(f[4:], " ")})
	return true
}

// readCall reads "call VCPU OVERLAP FLOPS×5 DRAMREAD DRAMWRITE LOADED
// STORED", one counted call.
func (img *image) readCall(f []string) bool {
	if len(f) != 11 {
		return false
	}
	v, ok := parseUints(f, 11, 10)
	if !ok || v[1] > 1 {
		return false
	}
	c := Call{Thread: int(v[0]), Overlapped: v[1] == 1, Work: map[string]uint64{},
		DRAM: Traffic{Read: v[7], Write: v[8]}, Core: Traffic{Read: v[9], Write: v[10]}}
	for i, p := range Precisions {
		c.Work[p] = v[2+i]
	}
	img.calls = append(img.calls, c)
	return true
}

func combine(imgs []*image, m CacheModel) Result {
	r := Result{Work: map[string]uint64{}, WorkByWidth: map[string]uint64{}, Model: m, Images: len(imgs)}
	next := map[[2]int]bool{}
	for _, img := range imgs {
		next[[2]int{img.pid, img.gen}] = true
	}
	levels := map[string]*LevelTraffic{}
	var order []string
	syms := newSymbolizer()
	funcs := map[[2]string]*Function{}
	for _, img := range imgs {
		for k, v := range img.flops {
			if v > 0 {
				r.Work[k] += v
			}
		}
		for k, v := range img.widths {
			if v > 0 {
				r.WorkByWidth[k] += v
			}
		}
		r.Core.Read += img.core.Read
		r.Core.Write += img.core.Write
		r.NonTemporal += img.nt
		r.Threads += img.vcpus
		r.ImageThreads = max(r.ImageThreads, img.vcpus)
		r.SharedSlot = r.SharedSlot || img.overflow
		if img.exec != "" && !next[[2]int{img.pid, img.gen + 1}] {
			r.NotCounted = append(r.NotCounted, img.exec)
		}
		for i, l := range img.levels {
			lower := roofline.LevelDRAM
			if i+1 < len(img.levels) {
				lower = img.levels[i+1].name
			}
			key := l.name + "-" + lower
			lt := levels[key]
			if lt == nil {
				lt = &LevelTraffic{Upper: l.name, Lower: lower}
				levels[key] = lt
				order = append(order, key)
			}
			lt.Read += l.fills * uint64(img.line)
			lt.Write += l.writebacks * uint64(img.line)
			if lower == roofline.LevelDRAM {
				lt.Write += img.nt
			}
		}
		if !img.hostAddrs {
			r.Unattributed = true
		}
		r.CallMapped = r.CallMapped || img.callMapped
		if len(img.calls) > 0 {
			r.CallImages++
		}
		r.Calls = append(r.Calls, img.calls...)
		for _, b := range img.blocks {
			obj, name := syms.name(img, b.vaddr)
			fn := funcs[[2]string{obj, name}]
			if fn == nil {
				fn = &Function{Name: name, Object: obj}
				funcs[[2]string{obj, name}] = fn
			}
			for _, f := range b.flops {
				fn.Flops += f * b.execs
			}
			fn.DRAM += b.dram
			fn.Core += b.core
		}
	}
	for _, k := range order {
		r.Levels = append(r.Levels, *levels[k])
	}
	for _, f := range funcs {
		r.Functions = append(r.Functions, *f)
	}
	sort.Slice(r.Functions, func(i, j int) bool {
		a, b := r.Functions[i], r.Functions[j]
		if a.Flops != b.Flops {
			return a.Flops > b.Flops
		}
		if a.DRAM != b.DRAM {
			return a.DRAM > b.DRAM
		}
		if a.Core != b.Core {
			return a.Core > b.Core
		}
		return a.Object+a.Name < b.Object+b.Name
	})
	return r
}
