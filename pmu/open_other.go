//go:build !linux

package pmu

import (
	"fmt"
	"runtime"
)

func errOS() error { return fmt.Errorf("%w on %s", ErrNotSupported, runtime.GOOS) }

func openTask(int, [][]Event, TaskOptions) (*Counters, error) { return nil, errOS() }

func openSystemWide([]Event) (*Counters, error) { return nil, errOS() }

func (c *Counters) enable(bool) error { return errOS() }

func (c *Counters) read() ([]Reading, error) { return nil, errOS() }

func (c *Counters) close() error { return nil }

func probe(Event) error { return errOS() }

func haveHardwareCounters() error { return errOS() }
