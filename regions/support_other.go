//go:build !linux

package regions

import (
	"fmt"
	"runtime"
)

// Supported says whether regions can be probed here: never on this OS.
func Supported() error { return fmt.Errorf("%w on %s", ErrNotSupported, runtime.GOOS) }
