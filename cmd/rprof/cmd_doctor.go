package main

import (
	"context"
	"errors"
)

// Placeholder until the doctor issue lands; replaced by the real command.
var cmdDoctor = &command{
	Name:      "doctor",
	UsageLine: "rprof doctor",
	Short:     "(not built yet)",
	Run: func(ctx context.Context, e *env, args []string) error {
		return errors.New("not built yet")
	},
}
