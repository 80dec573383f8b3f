//go:build !linux

package launch

import (
	"context"
	"errors"
	"fmt"
	"runtime"
)

func run(context.Context, Spec) (Result, error) {
	return Result{}, fmt.Errorf("launch: %w on %s", errors.ErrUnsupported, runtime.GOOS)
}

// Main is the launcher's entry point; there is no launcher off Linux.
func Main(args []string) int { return 125 }
