package measure

import (
	"context"
	"errors"

	"github.com/rprof/rprof/roofline"
)

// Run does everything `rprof run` does except rendering: it resolves the
// events, refuses (before running anything) when neither counters nor
// analytic values can give W and Q, runs the target the configured number of
// times under counters, subtracts overhead and idle traffic, computes the
// statistics and validity flags, and places the point under the roofs.
//
// A target that ran but failed is not an error: the point records its exit
// status and carries a flag. Errors are rprof's own failures and bad input
// (wrapping ErrInvalidConfig).
func Run(ctx context.Context, cfg Config) (*roofline.Point, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return nil, errors.New("measure: run not built yet")
}
