package main

import (
	"context"
	"errors"
)

// Placeholder until the compare issue lands; replaced by the real command.
var cmdCompare = &command{
	Name:      "compare",
	UsageLine: "rprof compare",
	Short:     "(not built yet)",
	Run: func(ctx context.Context, e *env, args []string) error {
		return errors.New("not built yet")
	},
}
