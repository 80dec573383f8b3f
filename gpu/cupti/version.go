package cupti

import (
	"fmt"

	"github.com/ebitengine/purego"
)

// MinVersion is the first CUPTI API version (CUDA 9.0) whose kernel
// records the injection library reads; CheckedVersion the newest (CUDA
// 11.8) whose record layout was checked against NVIDIA's headers. Both
// mirror inject/inject.c's MIN_VERSION and CHECKED_VERSION.
const (
	MinVersion     = 10
	CheckedVersion = 18
)

// Version opens the libcupti at path in this process and asks its API
// version (cuptiGetVersion, which needs no GPU), for rprof doctor.
func Version(path string) (int, error) {
	h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	if _, err := purego.Dlsym(h, "cuptiGetVersion"); err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	var get func(v *uint32) int32
	purego.RegisterLibFunc(&get, h, "cuptiGetVersion")
	var v uint32
	if r := get(&v); r != 0 {
		return 0, fmt.Errorf("%s: cuptiGetVersion: CUptiResult %d", path, r)
	}
	return int(v), nil
}
