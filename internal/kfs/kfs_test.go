package kfs

import (
	"errors"
	"reflect"
	"testing"
	"testing/fstest"
)

func TestParseCPUList(t *testing.T) {
	tests := []struct {
		in   string
		want []int
		ok   bool
	}{
		{"0-3,8-11", []int{0, 1, 2, 3, 8, 9, 10, 11}, true},
		{"0\n", []int{0}, true},
		{"", nil, true},
		{"\n", nil, true},
		{"5,1-2,2", []int{1, 2, 5}, true},
		{"8191", []int{8191}, true},
		{"8192", nil, false},
		{"0-", nil, false},
		{"-1", nil, false},
		{"3-1", nil, false},
		{"a", nil, false},
		{"0,,1", nil, false},
		{"0-1-2", nil, false},
	}
	for _, tt := range tests {
		got, err := ParseCPUList(tt.in)
		if (err == nil) != tt.ok || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseCPUList(%q) = %v, %v; want %v, ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
		if err != nil && !errors.Is(err, ErrMalformed) {
			t.Errorf("ParseCPUList(%q) error %v does not match ErrMalformed", tt.in, err)
		}
		if tt.ok && len(got) > 0 {
			back, _ := ParseCPUList(FormatList(got))
			if !reflect.DeepEqual(back, got) {
				t.Errorf("FormatList(%v) = %q does not parse back", got, FormatList(got))
			}
		}
	}
}

func TestReadProcStat(t *testing.T) {
	rest := " 5 1 0 -1 4194560 100 0 0 0 3 4 0 0 20 0 1 0 987654 1000 100"
	fsys := fstest.MapFS{
		"10/stat": {Data: []byte("10 (sleep) S 7" + rest + "\n")},
		"11/stat": {Data: []byte("11 (a) b) (c) Z 10" + rest)},
		"12/stat": {Data: []byte("12 (short) R 1 2 3")},
		"13/stat": {Data: []byte("13 sleep S 7" + rest)},
	}
	tests := []struct {
		pid  int
		want ProcStat
		err  bool
	}{
		{10, ProcStat{Comm: "sleep", State: "S", PPID: 7, PGRP: 5, StartTicks: 987654}, false},
		{11, ProcStat{Comm: "a) b) (c", State: "Z", PPID: 10, PGRP: 5, StartTicks: 987654}, false},
		{12, ProcStat{}, true},
		{13, ProcStat{}, true},
		{14, ProcStat{}, true},
	}
	for _, tt := range tests {
		got, err := ReadProcStat(fsys, tt.pid)
		if got != tt.want || (err != nil) != tt.err {
			t.Errorf("ReadProcStat(%d) = %+v, %v; want %+v, error %v", tt.pid, got, err, tt.want, tt.err)
		}
	}
}
