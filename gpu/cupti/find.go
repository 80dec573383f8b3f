package cupti

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// LibraryEnv names the environment variable that names libcupti.so; the
// injection library reads it in the target too.
const LibraryEnv = "RPROF_CUPTI_LIB"

// searched are the places CUPTI is installed, in the order tried after
// $LD_LIBRARY_PATH's directories: the
// toolkit that $CUDA_HOME or $CUDA_PATH names, NVIDIA's toolkit packages
// (/usr/local/cuda, versioned or not; extras/CUPTI before CUDA 12.0,
// lib64 since), Debian's and Ubuntu's libcupti package, and the pip
// wheels PyTorch installs (nvidia-cuda-cupti-cu12).
var searched = []string{
	"$CUDA_HOME/extras/CUPTI/lib64", "$CUDA_HOME/lib64",
	"$CUDA_PATH/extras/CUPTI/lib64", "$CUDA_PATH/lib64",
	"/usr/local/cuda/extras/CUPTI/lib64", "/usr/local/cuda/lib64",
	"/usr/local/cuda-*/extras/CUPTI/lib64", "/usr/local/cuda-*/lib64",
	"/usr/lib/x86_64-linux-gnu", "/usr/lib64",
	"/usr/lib/python3*/site-packages/nvidia/cuda_cupti/lib",
	"/usr/local/lib/python3*/dist-packages/nvidia/cuda_cupti/lib",
}

// NotFoundError: no libcupti was found where CUPTI is installed.
type NotFoundError struct {
	Searched []string
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("no CUPTI library (libcupti.so) in $%s or %s", LibraryEnv, strings.Join(e.Searched, ", "))
}

// ErrNotFound matches every *NotFoundError.
var ErrNotFound = errors.New("no CUPTI library")

// Is makes every NotFoundError match ErrNotFound.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

// Find is the libcupti to open: the file $RPROF_CUPTI_LIB names, else the
// first found in the usual places (searched), newest version first
// within a directory (by name, descending). root prefixes every path ("" is /: tests give a
// fake tree). Errors: *NotFoundError, or the named file's own.
func Find(root string, getenv func(string) string) (string, error) {
	if p := getenv(LibraryEnv); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("$%s: %w", LibraryEnv, err)
		}
		return p, nil
	}
	var tried []string
	dirs := append(filepath.SplitList(getenv("LD_LIBRARY_PATH")), searched...)
	for _, dir := range dirs {
		if dir == "" {
			continue
		}
		if strings.HasPrefix(dir, "$") {
			v, rest, _ := strings.Cut(dir[1:], "/")
			if getenv(v) == "" {
				continue
			}
			dir = filepath.Join(getenv(v), rest)
		}
		tried = append(tried, dir)
		matches, _ := filepath.Glob(filepath.Join(root, dir, "libcupti.so*"))
		// libcupti.so.12.4.127 before libcupti.so.11.8; the development
		// link libcupti.so, where alone, last.
		sort.Sort(sort.Reverse(sort.StringSlice(matches)))
		for _, m := range matches {
			if st, err := os.Stat(m); err == nil && st.Mode().IsRegular() {
				return m, nil
			}
		}
	}
	return "", &NotFoundError{Searched: tried}
}

// NVPerfEnv names the environment variable that names the NVPW host
// library (libnvperf_host.so), which CUPTI's range profiler needs to make
// its configuration and evaluate its counters; the injection library
// reads it in the target.
const NVPerfEnv = "RPROF_NVPERF_LIB"

// FindNVPerf is the NVPW host library beside libcupti, where every CUPTI
// distribution puts it (the toolkit's extras/CUPTI/lib64 or lib64, the
// pip wheel's lib), newest version first; "" if there is none.
func FindNVPerf(libcupti string) string {
	matches, _ := filepath.Glob(filepath.Join(filepath.Dir(libcupti), "libnvperf_host.so*"))
	sort.Sort(sort.Reverse(sort.StringSlice(matches)))
	for _, m := range matches {
		if st, err := os.Stat(m); err == nil && st.Mode().IsRegular() {
			return m
		}
	}
	return ""
}
