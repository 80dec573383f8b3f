//go:build !linux

package measure

import (
	"fmt"
	"runtime"

	"github.com/rprof/rprof/regions"
)

func planRegions(Config, []regions.Spec, Capabilities, []counterSpec) (*regionPlan, error) {
	return nil, fmt.Errorf("regions: %w on %s", regions.ErrNotSupported, runtime.GOOS)
}

func attachRegions(int, *regionPlan) (session, error) {
	return nil, fmt.Errorf("regions: %w on %s", regions.ErrNotSupported, runtime.GOOS)
}
