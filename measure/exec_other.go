//go:build !linux

package measure

import (
	"context"
	"fmt"
	"runtime"

	"github.com/rprof/rprof/pmu"
)

func execute(context.Context, ExecSpec) (Execution, error) {
	return Execution{}, fmt.Errorf("execute: %w on %s", pmu.ErrNotSupported, runtime.GOOS)
}
