//go:build !linux

package pmu

func openPerCPU(Event, []int) (*PerCPU, error) { return nil, errOS() }

func (p *PerCPU) close() error { return nil }
