package main

import (
	"context"
	"errors"
)

// Placeholder until the gate issue lands; replaced by the real command.
var cmdGate = &command{
	Name:      "gate",
	UsageLine: "rprof gate",
	Short:     "(not built yet)",
	Run: func(ctx context.Context, e *env, args []string) error {
		return errors.New("not built yet")
	},
}
