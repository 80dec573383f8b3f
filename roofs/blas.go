package roofs

import (
	"errors"
	"fmt"
	"strings"
	"unsafe"

	"github.com/ebitengine/purego"
)

// errNoBLAS is returned when no BLAS library with cblas_dgemm can be loaded.
var errNoBLAS = errors.New("no BLAS library found")

// BLASHint is how to get a BLAS on Debian and Ubuntu; the CLI prints it
// when DGEMM was skipped.
const BLASHint = "apt-get install libopenblas0-pthread"

// blasCandidates are tried in order when no path is given: the names the
// dynamic loader resolves on Debian/Ubuntu and Fedora, then the usual oneAPI
// location of MKL. OpenBLAS comes first because Debian's BLIS build picks
// its generic kernels on CPUs newer than the build.
var blasCandidates = []string{
	"libopenblas.so.0",
	"libopenblasp.so.0",
	"libmkl_rt.so.2",
	"libmkl_rt.so",
	"/opt/intel/oneapi/mkl/latest/lib/libmkl_rt.so.2",
	"/opt/intel/oneapi/mkl/latest/lib/intel64/libmkl_rt.so.2",
	"libblis.so.4",
	"libblis.so",
	"libblas.so.3",
}

// BLAS is a vendor BLAS loaded at run time (no cgo).
type BLAS struct {
	// Library is "OpenBLAS", "BLIS", "MKL" or "unknown".
	Library string
	// Path is what was opened (a file name or a path).
	Path    string
	Version string
	// CoreName is the kernel path the library chose: OpenBLAS's corename
	// ("Haswell", "SkylakeX", ...) or BLIS's architecture ("zen3",
	// "generic", ...).
	CoreName string
	// Config is OpenBLAS's build configuration string.
	Config string
	// Threaded is false when rprof does not know how to set the library's
	// thread count; it then uses the library's default.
	Threaded bool

	dgemm      func(order, transA, transB, m, n, k int32, alpha float64, a *float64, lda int32, b *float64, ldb int32, beta float64, c *float64, ldc int32)
	setThreads func(n int)
}

// LoadBLAS opens the BLAS at path, or the first of the usual libraries when
// path is empty. Variables that select kernels (OPENBLAS_CORETYPE,
// BLIS_ARCH_TYPE) must be in the environment before the first load.
func LoadBLAS(path string) (*BLAS, error) {
	if path != "" {
		return openBLAS(path)
	}
	for _, p := range blasCandidates {
		if b, err := openBLAS(p); err == nil {
			return b, nil
		}
	}
	return nil, fmt.Errorf("%w (tried %s)", errNoBLAS, strings.Join(blasCandidates, ", "))
}

func openBLAS(path string) (*BLAS, error) {
	lib, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return nil, fmt.Errorf("load BLAS: %w", err)
	}
	if _, err := purego.Dlsym(lib, "cblas_dgemm"); err != nil {
		return nil, fmt.Errorf("load BLAS %s: no cblas_dgemm: %w", path, err)
	}
	b := &BLAS{Library: "unknown", Path: path}
	purego.RegisterLibFunc(&b.dgemm, lib, "cblas_dgemm")
	has := func(sym string) bool { _, err := purego.Dlsym(lib, sym); return err == nil }
	switch {
	case has("openblas_get_config"):
		var config, corename func() string
		var set func(int32)
		purego.RegisterLibFunc(&config, lib, "openblas_get_config")
		purego.RegisterLibFunc(&corename, lib, "openblas_get_corename")
		purego.RegisterLibFunc(&set, lib, "openblas_set_num_threads")
		b.Library, b.Config, b.CoreName = "OpenBLAS", strings.TrimSpace(config()), corename()
		// The configuration string starts "OpenBLAS 0.3.21 ...".
		if f := strings.Fields(b.Config); len(f) > 1 && f[0] == "OpenBLAS" {
			b.Version = f[1]
		}
		b.setThreads, b.Threaded = func(n int) { set(int32(n)) }, true
	case has("bli_info_get_version_str"):
		var version func() string
		var archID func() int32
		var archString func(int32) string
		var set func(int64)
		purego.RegisterLibFunc(&version, lib, "bli_info_get_version_str")
		purego.RegisterLibFunc(&archID, lib, "bli_arch_query_id")
		purego.RegisterLibFunc(&archString, lib, "bli_arch_string")
		purego.RegisterLibFunc(&set, lib, "bli_thread_set_num_threads")
		b.Library, b.Version, b.CoreName = "BLIS", version(), archString(archID())
		b.setThreads, b.Threaded = func(n int) { set(int64(n)) }, true
	case has("MKL_Get_Version_String"):
		var version func(buf *byte, n int32)
		var set func(int32)
		purego.RegisterLibFunc(&version, lib, "MKL_Get_Version_String")
		purego.RegisterLibFunc(&set, lib, "MKL_Set_Num_Threads")
		buf := make([]byte, 256)
		version(&buf[0], int32(len(buf)))
		b.Library, b.Version = "MKL", strings.TrimSpace(string(buf[:clen(buf)]))
		b.setThreads, b.Threaded = func(n int) { set(int32(n)) }, true
	}
	return b, nil
}

func clen(b []byte) int {
	for i, c := range b {
		if c == 0 {
			return i
		}
	}
	return len(b)
}

// SetThreads sets the library's thread count (no-op when unknown).
func (b *BLAS) SetThreads(n int) {
	if b.setThreads != nil {
		b.setThreads(n)
	}
}

// CBLAS enumerations.
const (
	cblasRowMajor = 101
	cblasNoTrans  = 111
)

// Dgemm computes C = A·B in row major order, with A n×k, B k×m and C n×m
// as in seed 000 (alpha 1, beta 0). It panics on short slices, a
// programming error, rather than let the library read out of bounds.
func (b *BLAS) Dgemm(n, m, k int, a, bm, c []float64) {
	if len(a) < n*k || len(bm) < k*m || len(c) < n*m {
		panic(fmt.Sprintf("dgemm %dx%dx%d: slices too short (%d, %d, %d)", n, m, k, len(a), len(bm), len(c)))
	}
	b.dgemm(cblasRowMajor, cblasNoTrans, cblasNoTrans, int32(n), int32(m), int32(k),
		1, unsafe.SliceData(a), int32(k), unsafe.SliceData(bm), int32(m), 0, unsafe.SliceData(c), int32(m))
}

// dgemmFlops is the floating-point work of one n×m×k DGEMM.
func dgemmFlops(n, m, k int) float64 { return 2 * float64(n) * float64(m) * float64(k) }
