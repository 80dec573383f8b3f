package measure

import (
	"testing"
	"time"
)

// Each group refuses its own bad fields with a *ConfigError naming them,
// and Config.Validate refuses the same config alike.
func TestEachGroupValidatesItsOwnFields(t *testing.T) {
	target := Target{Command: []string{"k"}}
	neg := -1.0
	tests := []struct {
		name   string
		fields []string
		cfg    Config
		group  func(Config) error
	}{
		{"empty command", []string{"Target.Command"}, Config{}, func(c Config) error { return c.Target.Validate() }},
		{"negative repeat", []string{"Repetition.Repeat"}, Config{Target: target, Repetition: Repetition{Repeat: -1}}, func(c Config) error { return c.Repetition.Validate() }},
		{"confidence of 1", []string{"Repetition.Confidence"}, Config{Target: target, Repetition: Repetition{Confidence: 1}}, func(c Config) error { return c.Repetition.Validate() }},
		{"adaptive with 2 runs at most", []string{"Repetition.MaxRepeat"}, Config{Target: target, Repetition: Repetition{CI: 0.1, MaxRepeat: 2}}, func(c Config) error { return c.Repetition.Validate() }},
		{"negative max time", []string{"Repetition.MaxTime"}, Config{Target: target, Repetition: Repetition{MaxTime: -time.Second}}, func(c Config) error { return c.Repetition.Validate() }},
		{"empty overhead", []string{"Counting.Overhead"}, Config{Target: target, Counting: Counting{Overhead: []string{}}}, func(c Config) error { return c.Counting.Validate() }},
		{"negative work", []string{"Counting.Work"}, Config{Target: target, Counting: Counting{Work: &neg}}, func(c Config) error { return c.Counting.Validate() }},
		{"negative idle baseline", []string{"Counting.IdleBaseline"}, Config{Target: target, Counting: Counting{IdleBaseline: -time.Second}}, func(c Config) error { return c.Counting.Validate() }},
		{"bad region", []string{"Counting.Regions"}, Config{Target: target, Counting: Counting{Regions: []string{"lib:"}}}, func(c Config) error { return c.Counting.Validate() }},
		{"negative threads", []string{"Placement.Threads"}, Config{Target: target, Placement: Placement{Threads: -1}}, func(c Config) error { return c.Placement.Validate() }},
		{"bad counted function", []string{"Hooks.EmulatedCalls"}, Config{Target: target, Hooks: Hooks{EmulatedCalls: &CallCounting{Function: ""}}}, func(c Config) error { return c.Hooks.Validate() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.group(tt.cfg); !faultsFields(tt.fields...)(err) {
				t.Errorf("group: err = %v, want a *ConfigError naming %v", err, tt.fields)
			}
			if err := tt.cfg.Validate(); !faultsFields(tt.fields...)(err) {
				t.Errorf("Config: err = %v, want a *ConfigError naming %v", err, tt.fields)
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
