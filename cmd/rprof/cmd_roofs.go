package main

import (
	"context"
	"errors"
)

// Placeholder until the roofs issue lands; replaced by the real command.
var cmdRoofs = &command{
	Name:      "roofs",
	UsageLine: "rprof roofs",
	Short:     "(not built yet)",
	Run: func(ctx context.Context, e *env, args []string) error {
		return errors.New("not built yet")
	},
}
