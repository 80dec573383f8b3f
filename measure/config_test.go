package measure

import (
	"errors"
	"testing"
	"time"
)

// Each group refuses its own bad fields, and Config.Validate refuses the
// same config as the group does.
func TestEachGroupValidatesItsOwnFields(t *testing.T) {
	target := Target{Command: []string{"k"}}
	neg := -1.0
	tests := []struct {
		name  string
		cfg   Config
		group func(Config) error
	}{
		{"empty command", Config{}, func(c Config) error { return c.Target.Validate() }},
		{"negative repeat", Config{Target: target, Repetition: Repetition{Repeat: -1}}, func(c Config) error { return c.Repetition.Validate() }},
		{"confidence of 1", Config{Target: target, Repetition: Repetition{Confidence: 1}}, func(c Config) error { return c.Repetition.Validate() }},
		{"adaptive with 2 runs at most", Config{Target: target, Repetition: Repetition{CI: 0.1, MaxRepeat: 2}}, func(c Config) error { return c.Repetition.Validate() }},
		{"negative max time", Config{Target: target, Repetition: Repetition{MaxTime: -time.Second}}, func(c Config) error { return c.Repetition.Validate() }},
		{"empty overhead", Config{Target: target, Counting: Counting{Overhead: []string{}}}, func(c Config) error { return c.Counting.Validate() }},
		{"negative work", Config{Target: target, Counting: Counting{Work: &neg}}, func(c Config) error { return c.Counting.Validate() }},
		{"negative idle baseline", Config{Target: target, Counting: Counting{IdleBaseline: -time.Second}}, func(c Config) error { return c.Counting.Validate() }},
		{"bad region", Config{Target: target, Counting: Counting{Regions: []string{"lib:"}}}, func(c Config) error { return c.Counting.Validate() }},
		{"negative threads", Config{Target: target, Placement: Placement{Threads: -1}}, func(c Config) error { return c.Placement.Validate() }},
		{"bad counted function", Config{Target: target, Hooks: Hooks{EmulatedCalls: &CallCounting{Function: ""}}}, func(c Config) error { return c.Hooks.Validate() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.group(tt.cfg); !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("group: err = %v, want ErrInvalidConfig", err)
			}
			if err := tt.cfg.Validate(); !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("Config: err = %v, want ErrInvalidConfig", err)
			}
		})
	}
	good := Config{Target: target}
	for name, err := range map[string]error{"Config": good.Validate(), "Target": good.Target.Validate(), "Counting": good.Counting.Validate(),
		"Repetition": good.Repetition.Validate(), "Placement": good.Placement.Validate(), "Hooks": good.Hooks.Validate()} {
		if err != nil {
			t.Errorf("%s of a plain run: %v", name, err)
		}
	}
}
