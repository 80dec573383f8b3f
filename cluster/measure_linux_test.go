package cluster

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rprof/rprof/internal/lock"
	"github.com/rprof/rprof/internal/rundir"
	"github.com/rprof/rprof/measure"
	"github.com/rprof/rprof/roofline"
)

// holdMachine takes the machine lock as a roofs would, in this process.
func holdMachine(t *testing.T) *lock.Lock {
	t.Helper()
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	l, err := lock.Acquire(context.Background(), rundir.Default(), lock.Request{Mode: lock.Exclusive, What: "rprof roofs"})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestMeasureSaysItWaitsForTheMachineThenMeasures(t *testing.T) {
	roofs := holdMachine(t)
	time.AfterFunc(200*time.Millisecond, roofs.Release)
	var told, measuredAfterTelling bool
	start := time.Now()
	p, err := Measure(context.Background(), measure.Config{}, Run{
		Machine: lock.Request{Mode: lock.Shared, Timeout: time.Minute, Waiting: func(lock.Holder) { told = true }},
		Measure: func(context.Context, measure.Config) (*roofline.Point, error) {
			measuredAfterTelling = told
			return &roofline.Point{}, nil
		}})
	if err != nil || p == nil || !measuredAfterTelling {
		t.Errorf("Measure = %v, %v; measured after saying it waits: %v", p, err, measuredAfterTelling)
	}
	if took := time.Since(start); took < 150*time.Millisecond {
		t.Errorf("measured after %v, before the holder released the machine", took)
	}
}

func TestMeasureGivesUpOnAHeldMachineWithoutMeasuring(t *testing.T) {
	defer holdMachine(t).Release()
	interrupted, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name    string
		ctx     context.Context
		timeout time.Duration
		want    func(error) bool
	}{
		{"a zero timeout", context.Background(), 0, func(err error) bool { var te *lock.TimeoutError; return errors.As(err, &te) }},
		{"an interrupted wait", interrupted, time.Hour, func(err error) bool { return errors.Is(err, context.Canceled) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			measured := false
			_, err := Measure(tt.ctx, measure.Config{}, Run{Machine: lock.Request{Mode: lock.Shared, Timeout: tt.timeout},
				Measure: func(context.Context, measure.Config) (*roofline.Point, error) {
					measured = true
					return &roofline.Point{}, nil
				}})
			var me *MachineError
			if !errors.As(err, &me) || !tt.want(me.Err) || measured {
				t.Errorf("Measure = %v (measured: %v), want a *MachineError and nothing measured", err, measured)
			}
		})
	}
}

func TestMeasureEntersARankInItsNodesElection(t *testing.T) {
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	id := Identity{Launcher: OpenMPI, Job: "j", Node: "n", Size: 1, LocalSize: 1}
	tests := []struct {
		name      string
		rank      bool
		lockDir   string
		backend   string
		bystander bool // told why it stands by
		owner     bool
	}{
		{"a lone process", false, "", "", false, false},
		{"a rank that owns its node's traffic", true, lockDir(t), "", false, true},
		{"a rank whose lock directory is a file", true, notDir, "", true, false},
		{"a rank counting its own traffic", true, notDir, measure.BackendEmulate, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var why error
			p, err := Measure(context.Background(), measure.Config{Counting: measure.Counting{Backend: tt.backend}}, Run{
				Identity: id, Rank: tt.rank, LockDir: tt.lockDir, Version: "v1",
				Bystander: func(err error) { why = err },
				Measure: func(ctx context.Context, cfg measure.Config) (*roofline.Point, error) {
					// As measure.Run does with its node.
					if n := cfg.Counting.Node; n != nil {
						n.Elect(ctx)
						n.Started()
						n.Ended(ctx)
					}
					return &roofline.Point{}, nil
				}})
			var lde *LockDirError
			if err != nil || (why != nil) != tt.bystander || why != nil && !errors.As(why, &lde) {
				t.Fatalf("Measure = %v, told %v; want it told only a bystander's reason", err, why)
			}
			if (p.Rank != nil) != tt.rank || p.Rank != nil && (p.Rank.TrafficOwner != tt.owner || p.Rank.Version != "v1") {
				t.Errorf("Rank = %+v, want a rank's place (owner %v) only for a rank", p.Rank, tt.owner)
			}
		})
	}
}

func TestMeasureTimesAloneOnlyWhereAskedAndCountersAreMissing(t *testing.T) {
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	noCounters := &measure.NoCountersError{Err: errors.New("no PMU")}
	for _, orTime := range []bool{false, true} {
		var events [][]string
		var told *measure.NoCountersError
		r := Run{Measure: func(_ context.Context, cfg measure.Config) (*roofline.Point, error) {
			events = append(events, cfg.Counting.Events)
			if len(cfg.Counting.Events) == 0 {
				return nil, noCounters
			}
			return &roofline.Point{}, nil
		}}
		if orTime {
			r.OrTime = func(nc *measure.NoCountersError) { told = nc }
		}
		p, err := Measure(context.Background(), measure.Config{}, r)
		switch {
		case !orTime && (!errors.Is(err, noCounters) || len(events) != 1):
			t.Errorf("without OrTime: %v after %d runs, want the refusal after one", err, len(events))
		case orTime && (err != nil || p == nil || told != noCounters || len(events) != 2 || len(events[1]) != 1 || events[1][0] != "task-clock"):
			t.Errorf("with OrTime: %v, told %v, events %q; want a second run counting task-clock", err, told, events)
		}
	}
}
