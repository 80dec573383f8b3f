package main

import (
	"context"
	"errors"
)

// Placeholder until the run issue lands; replaced by the real command.
var cmdRun = &command{
	Name:      "run",
	UsageLine: "rprof run",
	Short:     "(not built yet)",
	Run: func(ctx context.Context, e *env, args []string) error {
		return errors.New("not built yet")
	},
}
