package main

import (
	"context"
	"errors"
)

// Placeholder until the report issue lands; replaced by the real command.
var cmdReport = &command{
	Name:      "report",
	UsageLine: "rprof report",
	Short:     "(not built yet)",
	Run: func(ctx context.Context, e *env, args []string) error {
		return errors.New("not built yet")
	},
}
