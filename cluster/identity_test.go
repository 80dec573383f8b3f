package cluster

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// envFile reads a KEY=VALUE fixture into a getenv function.
func envFile(t *testing.T, name string) func(string) string {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "env", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	vars := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			vars[k] = v
		}
	}
	return func(k string) string { return vars[k] }
}

func fixedProxy() (int, uint64, error) { return 16810, 123456, nil }

func TestFromEnvMeasuredEnvironments(t *testing.T) {
	tests := []struct {
		file string
		want Identity
	}{
		{"openmpi-0.env", Identity{Launcher: OpenMPI, Rank: 0, Size: 2, LocalRank: 0, LocalSize: 2, Node: "n", Job: "ompi-562626561"}},
		{"openmpi-1.env", Identity{Launcher: OpenMPI, Rank: 1, Size: 2, LocalRank: 1, LocalSize: 2, Node: "n", Job: "ompi-562626561"}},
		{"mpich-1.env", Identity{Launcher: MPICH, Rank: 1, Size: 2, LocalRank: 1, LocalSize: 2, Node: "n", Job: "mpich-16810-123456"}},
		{"srun-env-1.env", Identity{Launcher: Slurm, Rank: 1, Size: 2, LocalRank: 1, LocalSize: 2, Node: "n", Job: "slurm-1.0"}},
		// The sbatch trap: SLURM_PROCID=0 is inherited; Open MPI's rank wins.
		{"sbatch-ompi-env-1.env", Identity{Launcher: OpenMPI, Rank: 1, Size: 2, LocalRank: 1, LocalSize: 2, Node: "n", Job: "ompi-661127169"}},
		{"srun-3nodes-derived.env", Identity{Launcher: Slurm, Rank: 4, Size: 5, LocalRank: 0, LocalSize: 1, Node: "n", Job: "slurm-1.0"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got, err := FromEnv(Environment{Getenv: envFile(t, tt.file), Hostname: "n", Proxy: fixedProxy})
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("FromEnv = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestFromEnvBatchShellIsNoRank(t *testing.T) {
	// The sbatch shell has SLURM_PROCID=0 but no step: not a rank.
	_, err := FromEnv(Environment{Getenv: envFile(t, "batch-env.env"), Hostname: "n"})
	if !errors.Is(err, ErrNoLauncher) {
		t.Errorf("FromEnv(batch shell) = %v, want ErrNoLauncher", err)
	}
}

func TestFromEnvRejectsBrokenVariables(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want string // the variable the error names
	}{
		{"ompi rank not a number", map[string]string{"OMPI_COMM_WORLD_RANK": "x", "OMPI_COMM_WORLD_SIZE": "2",
			"OMPI_COMM_WORLD_LOCAL_RANK": "0", "OMPI_COMM_WORLD_LOCAL_SIZE": "2", "PMIX_NAMESPACE": "1"}, "OMPI_COMM_WORLD_RANK"},
		{"ompi no size", map[string]string{"OMPI_COMM_WORLD_RANK": "0",
			"OMPI_COMM_WORLD_LOCAL_RANK": "0", "OMPI_COMM_WORLD_LOCAL_SIZE": "2", "PMIX_NAMESPACE": "1"}, "OMPI_COMM_WORLD_SIZE"},
		{"ompi no job", map[string]string{"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "2",
			"OMPI_COMM_WORLD_LOCAL_RANK": "0", "OMPI_COMM_WORLD_LOCAL_SIZE": "2"}, "PMIX_NAMESPACE"},
		{"slurm bad tasks per node", map[string]string{"SLURM_STEP_ID": "0", "SLURM_PROCID": "0", "SLURM_LOCALID": "0",
			"SLURM_NTASKS": "2", "SLURM_NODEID": "0", "SLURM_JOB_ID": "7", "SLURM_STEP_TASKS_PER_NODE": "2(y2)"}, "SLURM_STEP_TASKS_PER_NODE"},
		{"slurm node beyond list", map[string]string{"SLURM_STEP_ID": "0", "SLURM_PROCID": "0", "SLURM_LOCALID": "0",
			"SLURM_NTASKS": "2", "SLURM_NODEID": "3", "SLURM_JOB_ID": "7", "SLURM_STEP_TASKS_PER_NODE": "2"}, "SLURM_NODEID"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := FromEnv(Environment{Getenv: func(k string) string { return tt.env[k] }, Hostname: "n"})
			var ee *EnvError
			if !errors.As(err, &ee) || ee.Var != tt.want {
				t.Errorf("FromEnv = %v, want an *EnvError about %s", err, tt.want)
			}
		})
	}
}

func TestFromEnvRankBeyondSize(t *testing.T) {
	env := map[string]string{"PMI_RANK": "4", "PMI_SIZE": "4", "MPI_LOCALRANKID": "0", "MPI_LOCALNRANKS": "1"}
	if _, err := FromEnv(Environment{Getenv: func(k string) string { return env[k] }, Proxy: fixedProxy}); err == nil {
		t.Error("rank 4 of 4 accepted")
	}
}

func TestTasksPerNode(t *testing.T) {
	tests := []struct {
		in   string
		want []int
		ok   bool
	}{
		{"2", []int{2}, true},
		{"2(x2),1", []int{2, 2, 1}, true},
		{"4(x3)", []int{4, 4, 4}, true},
		{"1,3(x2),2", []int{1, 3, 3, 2}, true},
		{"", nil, false},
		{"2(x0)", nil, false},
		{"2(2)", nil, false},
		{"a", nil, false},
		{"2(x2", nil, false},
	}
	for _, tt := range tests {
		got, err := TasksPerNode(tt.in)
		if (err == nil) != tt.ok || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("TasksPerNode(%q) = %v, %v; want %v, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}
