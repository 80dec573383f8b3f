//go:build !linux

package dnnrun

import (
	"errors"
	"fmt"
	"runtime"
)

func targetPath(string) (string, error) {
	return "", fmt.Errorf("dnnrun: %w on %s", errors.ErrUnsupported, runtime.GOOS)
}
