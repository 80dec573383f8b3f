package machine

import (
	"errors"
	"testing"
	"testing/fstest"
)

func TestReadCPUTimesSplitsBusyIdleAndSteal(t *testing.T) {
	procfs := fstest.MapFS{"stat": {Data: []byte("cpu  100 5 20 800 10 3 2 7 0 0\ncpu0 50 2 10 400 5 1 1 3 0 0\n")}}
	before, err := ReadCPUTimes(procfs)
	if err != nil {
		t.Fatal(err)
	}
	if before != (CPUTimes{Busy: 130, Idle: 810, Steal: 7}) {
		t.Errorf("read %+v", before)
	}
	// iowait went back by 2: it reads as no idle time, not a wrap.
	after := CPUTimes{Busy: 230, Idle: 808, Steal: 7}
	if d := after.Sub(before); d != (CPUTimes{Busy: 100}) || d.IdleShare() != 0 {
		t.Errorf("Sub = %+v, idle share %g", d, d.IdleShare())
	}
	for _, bad := range []string{"", "intr 5\n", "cpu 1 2 x 4 5 6 7 8\n", "cpu 1 2 3\n"} {
		if _, err := ReadCPUTimes(fstest.MapFS{"stat": {Data: []byte(bad)}}); !errors.Is(err, ErrMalformed) {
			t.Errorf("%q: err %v, want ErrMalformed", bad, err)
		}
	}
}
