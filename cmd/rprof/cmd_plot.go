package main

import (
	"context"
	"errors"
)

// Placeholder until the plot issue lands; replaced by the real command.
var cmdPlot = &command{
	Name:      "plot",
	UsageLine: "rprof plot",
	Short:     "(not built yet)",
	Run: func(ctx context.Context, e *env, args []string) error {
		return errors.New("not built yet")
	},
}
