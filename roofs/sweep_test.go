package roofs

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/rprof/rprof/roofline"

	"github.com/rprof/rprof/internal/unit"
)

func TestSweepSizes(t *testing.T) {
	tests := []struct {
		name          string
		lo, hi        int64
		perOctave     int
		quantum       int64
		want          []int64
		wantErrSubstr string
	}{
		{name: "one octave in thirds", lo: 1024, hi: 2048, perOctave: 3, quantum: 1, want: []int64{1024, 1290, 1625, 2048}},
		{name: "rounded to the quantum", lo: 1536, hi: 6144, perOctave: 2, quantum: 1536, want: []int64{1536, 3072, 4608, 6144}},
		{name: "duplicates after rounding are dropped", lo: 100, hi: 400, perOctave: 4, quantum: 100, want: []int64{100, 200, 300, 400}},
		{name: "a size below the quantum becomes one quantum", lo: 10, hi: 10, perOctave: 3, quantum: 64, want: []int64{64}},
		{name: "empty range", lo: 10, hi: 5, perOctave: 3, quantum: 1, wantErrSubstr: "empty"},
		{name: "zero start", lo: 0, hi: 5, perOctave: 3, quantum: 1, wantErrSubstr: "empty"},
		{name: "no steps", lo: 1, hi: 5, perOctave: 0, quantum: 1, wantErrSubstr: "steps per octave"},
		{name: "no quantum", lo: 1, hi: 5, perOctave: 3, quantum: 0, wantErrSubstr: "quantum"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := sweepSizes(tt.lo, tt.hi, tt.perOctave, tt.quantum)
			if tt.wantErrSubstr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErrSubstr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErrSubstr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSweepRangeSpansL1ToTwiceTheLastCache(t *testing.T) {
	lo, hi, err := sweepRange([]cacheLevel{{"L1", 32 << 10}, {"L2", 1 << 20}, {"L3", 32 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	if lo != 8<<10 || hi != 64<<20 {
		t.Errorf("range %d..%d, want 8 KiB..64 MiB", lo, hi)
	}
	if _, _, err := sweepRange(nil); err == nil {
		t.Error("no levels: want an error")
	}
	if _, _, err := sweepRange([]cacheLevel{{"L2", 0}}); err == nil || !strings.Contains(err.Error(), "L2") {
		t.Errorf("zero-sized level: err = %v, want one naming it", err)
	}
}

func TestSweepMeasuresEachSizeInOrder(t *testing.T) {
	var seen []int64
	var progress []int
	eval := func(_ context.Context, ws int64) (float64, roofline.Interval, error) {
		seen = append(seen, ws)
		return float64(ws), roofline.Interval{Lo: float64(ws) - 1, Hi: float64(ws) + 1}, nil
	}
	pts, err := sweep(context.Background(), []int64{10, 20, 30}, eval, func(done, total int) { progress = append(progress, done*10+total) })
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(seen, []int64{10, 20, 30}) || !slices.Equal(progress, []int{13, 23, 33}) {
		t.Errorf("evaluated %v with progress %v", seen, progress)
	}
	if want := (sweepPoint{20, 20, roofline.Interval{Lo: 19, Hi: 21}}); pts[1] != want {
		t.Errorf("point 1 = %+v, want %+v", pts[1], want)
	}
}

func TestSweepStopsAtTheFirstErrorNamingTheSize(t *testing.T) {
	boom := errors.New("boom")
	eval := func(_ context.Context, ws int64) (float64, roofline.Interval, error) {
		if ws == 2048 {
			return 0, roofline.Interval{}, boom
		}
		return 1, roofline.Interval{}, nil
	}
	pts, err := sweep(context.Background(), []int64{1024, 2048, 4096}, eval, nil)
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "2 KiB") {
		t.Errorf("err = %v, want boom naming 2 KiB", err)
	}
	if len(pts) != 1 {
		t.Errorf("kept %d points, want the 1 measured before the error", len(pts))
	}
}

func TestSweepStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	eval := func(context.Context, int64) (float64, roofline.Interval, error) {
		cancel()
		return 1, roofline.Interval{}, nil
	}
	pts, err := sweep(ctx, []int64{1, 2, 3}, eval, nil)
	if !errors.Is(err, context.Canceled) || len(pts) != 1 {
		t.Errorf("err = %v with %d points, want context.Canceled after 1", err, len(pts))
	}
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1 KiB", 48 << 10: "48 KiB", 1536 << 10: "1.5 MiB", 32 << 20: "32 MiB", 3 << 30: "3 GiB"} {
		if got := unit.Bytes(n); got != want {
			t.Errorf("unit.Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestWithDRAMSizesReachesTheDRAMFloorOnce(t *testing.T) {
	const q = 3 * 64
	sizes := withDRAMSizes([]int64{1 << 20, 256 << 20}, q)
	if n := len(sizes); n != 4 || sizes[2] < dramMinBytes || sizes[3] < 2*dramMinBytes || sizes[2]%q != 0 || sizes[3]%q != 0 {
		t.Errorf("withDRAMSizes = %v, want two sizes added at or above %d and %d, multiples of %d", sizes, dramMinBytes, 2*dramMinBytes, q)
	}
	long := []int64{1 << 20, 4 << 30}
	if got := withDRAMSizes(long, q); len(got) != 2 {
		t.Errorf("withDRAMSizes(sweep already past the floor) = %v, want it unchanged", got)
	}
}
