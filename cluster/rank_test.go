package cluster

import "testing"

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
