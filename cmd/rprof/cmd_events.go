package main

import (
	"context"
	"errors"
)

// Placeholder until the events issue lands; replaced by the real command.
var cmdEvents = &command{
	Name:      "events",
	UsageLine: "rprof events",
	Short:     "(not built yet)",
	Run: func(ctx context.Context, e *env, args []string) error {
		return errors.New("not built yet")
	},
}
