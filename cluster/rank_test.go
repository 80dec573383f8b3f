package cluster

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/rprof/rprof/internal/docfile"
	"github.com/rprof/rprof/roofline"
)

func TestLauncherInNamesALauncherOnlyAsTheCommand(t *testing.T) {
	tests := []struct {
		argv []string
		want string
	}{
		{nil, ""},
		{[]string{"/usr/bin/mpirun", "-n", "4", "./app"}, "mpirun"},
		{[]string{"srun", "./app"}, "srun"},
		{[]string{"mpiexec.hydra", "./app"}, "mpiexec.hydra"},
		{[]string{"./app", "mpirun"}, ""},
		{[]string{"./mpirun-wrapper"}, ""},
	}
	for _, tt := range tests {
		if got := LauncherIn(tt.argv); got != tt.want {
			t.Errorf("LauncherIn(%q) = %q, want %q", tt.argv, got, tt.want)
		}
	}
}

func TestRankFileSortsRanksAndKeepsTheJobOneName(t *testing.T) {
	tests := []struct {
		id   Identity
		want string
	}{
		{Identity{Job: "42", Rank: 3, Size: 4}, "d/42.rank3.json"},
		{Identity{Job: "42", Rank: 3, Size: 16}, "d/42.rank03.json"},
		{Identity{Job: "42", Rank: 0, Size: 101}, "d/42.rank000.json"},
		{Identity{Job: "a/b c", Rank: 0, Size: 1}, "d/a_b_c.rank0.json"},
	}
	for _, tt := range tests {
		if got := RankFile("d", tt.id); got != tt.want {
			t.Errorf("RankFile(d, %+v) = %q, want %q", tt.id, got, tt.want)
		}
	}
}

func TestEnterStandsByWhereTheRankCannotOrNeedNotTakePart(t *testing.T) {
	id := Identity{Job: "1", Rank: 0, Size: 2, LocalSize: 2, Node: "n"}
	n, err := Enter(t.TempDir(), id, false)
	if _, ok := n.(*Bystander); !ok || err != nil {
		t.Errorf("Enter(traffic not shared) = %T, %v; want a *Bystander and no error", n, err)
	}
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	n, err = Enter(notDir, id, true)
	var lde *LockDirError
	if _, ok := n.(*Bystander); !ok || !errors.As(err, &lde) {
		t.Errorf("Enter(a file for the lock directory) = %T, %v; want a *Bystander and a *LockDirError", n, err)
	}
}

func TestDescribePlacesTheRankInItsJob(t *testing.T) {
	id := Identity{Launcher: Slurm, Job: "7", Rank: 1, Size: 2, LocalRank: 1, LocalSize: 2, Node: "n1"}
	b := &Bystander{}
	b.Started()
	b.Ended(context.Background())
	roofs, err := docfile.ReadRoofs(filepath.Join("..", "roofline", "testdata", "roofs_zen5_vm.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []*roofline.Roofs{nil, roofs} {
		var p roofline.Point
		Describe(&p, id, b, r, "v1")
		got := p.Rank
		if got == nil || got.Job != "7" || got.Rank != 1 || got.Node != "n1" || got.TrafficOwner || got.Version != "v1" ||
			got.Start.IsZero() || got.End.Before(got.Start) || (got.NodeRoofs != nil) != (r != nil) {
			t.Errorf("roofs %v: Rank = %+v", r != nil, got)
		}
	}
}
