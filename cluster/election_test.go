package cluster

import (
	"reflect"
	"testing"
)

func TestParseLogSkipsTornLines(t *testing.T) {
	got := parseLog("start a 10 100\nend a 10 100\nstart b 1\nstart c x 5\nstart c 12 120")
	want := []logEntry{{true, "a", proc{10, 100}}, {false, "a", proc{10, 100}}, {true, "c", proc{12, 120}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parseLog = %+v, want %+v", got, want)
	}
}

func TestOwnersBefore(t *testing.T) {
	log := parseLog("start a 10 100\nstart b 11 110\nend a 10 100\nstart d 13 130\nstart self 12 120\n")
	live := map[proc]bool{{11, 110}: true}
	got := ownersBefore(log, "self", func(p proc) bool { return live[p] })
	// a ended; d never ended but is dead (killed): only b counts.
	if len(got) != 1 {
		t.Errorf("ownersBefore = %q, want only job b", got)
	}
}

func TestOwnersDuring(t *testing.T) {
	got := ownersDuring(parseLog("end x 1 1\nstart self 2 2\nstart y 3 3\n"), "self")
	if len(got) != 1 {
		t.Errorf("ownersDuring = %q, want only job y", got)
	}
}

func TestJobDirNameIsSafe(t *testing.T) {
	if got := jobDirName(Identity{Job: "slurm-1.0", Node: "a/b c"}); got != "rprof-slurm-1.0@a_b_c" {
		t.Errorf("jobDirName = %q", got)
	}
}
