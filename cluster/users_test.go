package cluster

import (
	"errors"
	"fmt"
	"testing"
	"testing/fstest"
)

// procTree is a fake /proc: pid -> (command, parent, effective uid).
type procTree map[int]struct {
	comm      string
	ppid, uid int
}

func (pt procTree) fs() fstest.MapFS {
	m := fstest.MapFS{}
	for pid, p := range pt {
		m[fmt.Sprintf("%d/stat", pid)] = &fstest.MapFile{Data: []byte(fmt.Sprintf("%d (%s) S %d 1 1 0 -1 4194560 100 0 0 0 3 4 0 0 20 0 1 0 1000 1000 100\n", pid, p.comm, p.ppid))}
		m[fmt.Sprintf("%d/status", pid)] = &fstest.MapFile{Data: []byte(fmt.Sprintf("Name:\t%s\nUid:\t%d\t%d\t%d\t%d\n", p.comm, p.uid, p.uid, p.uid, p.uid))}
	}
	return m
}

func TestOtherUsersRankIsFoundUnderTheSameLauncher(t *testing.T) {
	base := procTree{
		1:   {"systemd", 0, 0},
		100: {"hydra_pmi_proxy", 1, 1000},
		101: {"rprof", 100, 1000}, // this rank
		102: {"rprof", 100, 1000}, // a rank of the same user
		110: {"mpirun", 1, 1001},  // another user's job
		111: {"rprof", 110, 1001},
	}
	tests := []struct {
		name string
		add  procTree
		want int // the other rank's pid, 0 for none
	}{
		{"one user's ranks, another user's job beside them", nil, 0},
		{"a rank under sudo as another user", procTree{103: {"sudo", 100, 0}, 104: {"rprof", 103, 1001}}, 104},
		{"another user's process of another name", procTree{105: {"sleep", 100, 1001}}, 0},
		{"a rank as root under slurmstepd's sibling", procTree{106: {"rprof", 1, 0}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tree := procTree{}
			for k, v := range base {
				tree[k] = v
			}
			for k, v := range tt.add {
				tree[k] = v
			}
			err := otherUsersRank(tree.fs(), 101, 1000)
			var mu *MixedUsersError
			switch {
			case tt.want == 0 && err != nil:
				t.Errorf("otherUsersRank = %v, want none", err)
			case tt.want != 0 && (!errors.As(err, &mu) || mu.PID != tt.want || mu.UID != 1001 || mu.DaemonPID != 100):
				t.Errorf("otherUsersRank = %v, want pid %d of uid 1001 under pid 100", err, tt.want)
			}
		})
	}
}

func TestOtherUsersRankOutsideALauncherFindsNone(t *testing.T) {
	tree := procTree{1: {"init", 0, 0}, 50: {"bash", 1, 1000}, 51: {"rprof", 50, 1000}, 52: {"rprof", 50, 0}}
	if err := otherUsersRank(tree.fs(), 51, 1000); err != nil {
		t.Errorf("otherUsersRank = %v, want none without a launcher", err)
	}
}
