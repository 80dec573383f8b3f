package machine

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
)

// ErrNoMemAvailable is returned when meminfo has no MemAvailable line
// (kernels before 3.14).
var ErrNoMemAvailable = errors.New("no MemAvailable in meminfo")

// MemAvailable reads the kernel's estimate of the memory available to new
// work without swapping, in bytes, from meminfo in procfs (a file system
// rooted like /proc).
func MemAvailable(procfs fs.FS) (int64, error) {
	b, err := fs.ReadFile(procfs, "meminfo")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		rest, ok := strings.CutPrefix(line, "MemAvailable:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("read meminfo: MemAvailable %q: want a count of kB", strings.TrimSpace(rest))
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || kb < 0 {
			return 0, fmt.Errorf("read meminfo: MemAvailable %q: want a count of kB", strings.TrimSpace(rest))
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("read meminfo: %w", ErrNoMemAvailable)
}
