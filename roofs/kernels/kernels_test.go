package kernels

import (
	"math"
	"slices"
	"testing"
	"unsafe"
)

func TestAllocIsAlignedAndWhole(t *testing.T) {
	for _, n := range []int{-1, 0, 1, 63, 64, 65, 1000, hugeBytes/8 - 1, hugeBytes / 8, 3*hugeBytes/8 + 5} {
		x := Alloc(n)
		if len(x)%blockElems != 0 || len(x) < n {
			t.Errorf("Alloc(%d): len %d, want a multiple of %d >= n", n, len(x), blockElems)
		}
		want := uintptr(align)
		if len(x)*8 >= hugeBytes {
			want = hugeBytes
		}
		if len(x) > 0 && uintptr(unsafe.Pointer(&x[0]))%want != 0 {
			t.Errorf("Alloc(%d): address not %d-byte aligned", n, want)
		}
		for i, v := range x {
			if v != 0 {
				t.Fatalf("Alloc(%d)[%d] = %g, want 0", n, i, v)
			}
		}
	}
}

func TestCarvedArraysAreDisjointAndAlignedAsSeparateAllocs(t *testing.T) {
	const page = hugeElems
	addr := func(x []float64) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(x))) }
	for _, total := range []int{3, 64, 1000, page - 1, page, 3*page + 7, 10 * page} {
		buf := Alloc(SharedLen(total))
		if len(buf)%page != 0 {
			t.Errorf("SharedLen(%d) = %d, want whole huge pages", total, len(buf))
		}
		for arrays := 1; arrays <= maxArrays; arrays++ {
			k := Bandwidth{Name: "k", Arrays: arrays}
			n := total / arrays
			a, b, c := k.Carve(buf, n)
			var got [][]float64
			for _, x := range [][]float64{a, b, c} {
				if x != nil {
					got = append(got, x)
				}
			}
			if len(got) != arrays {
				t.Fatalf("%d elements, %d arrays: carved %d arrays", total, arrays, len(got))
			}
			for i, x := range got {
				if len(x) != n || cap(x) != n {
					t.Errorf("%d elements, %d arrays: array %d has len %d cap %d, want %d", total, arrays, i, len(x), cap(x), n)
				}
				if n > 0 && addr(x)%hugeBytes != 0 {
					t.Errorf("%d elements, %d arrays: array %d is not on a huge-page boundary", total, arrays, i)
				}
				if i > 0 && n > 0 && addr(x) < addr(got[i-1])+uintptr(8*n) {
					t.Errorf("%d elements, %d arrays: arrays %d and %d overlap", total, arrays, i-1, i)
				}
			}
		}
	}
}

// fill gives each element a distinct value so a skipped or repeated
// element shows.
func fill(x []float64, seed float64) {
	for i := range x {
		x[i] = seed + float64(i%977)*0.25
	}
}

func TestBandwidthKernelsMatchGoLoop(t *testing.T) {
	ok, _ := BandwidthKernels()
	const s = 3.0
	for _, k := range append(ok, goBandwidth...) {
		// Offsets misalign the slices' starts; lengths leave tails the
		// assembly does not cover.
		for _, off := range []int{0, 1, 3} {
			for _, n := range []int{0, 5, 64, 200, 4096 + 7} {
				a, b, c := Alloc(n + off)[off:], Alloc(n + off)[off:], Alloc(n + off)[off:]
				a, b, c = a[:n], b[:n], c[:n]
				fill(a, -1)
				fill(b, 1)
				fill(c, 2)
				switch k.Name {
				case "load":
					// Checked by TestLoadKernelsSum: b is only read.
					k.Run(a, b, c, s, 1)
					continue
				case "daxpy":
					was := slices.Clone(a)
					k.Run(a, nil, c, s, 1)
					for i := range a {
						if want := was[i] + s*c[i]; a[i] != want {
							t.Fatalf("%s daxpy n=%d off=%d: a[%d] = %v, want %v", k.ISA, n, off, i, a[i], want)
						}
					}
					continue
				case "update":
					was := slices.Clone(b)
					k.Run(nil, b, nil, s, 1)
					for i := range b {
						if want := -was[i]; b[i] != want {
							t.Fatalf("%s update n=%d off=%d: b[%d] = %v, want %v", k.ISA, n, off, i, b[i], want)
						}
					}
					continue
				}
				k.Run(a, b, c, s, 1)
				for i := range a {
					// s*c and b are small integers and quarters, so fused and
					// separate rounding agree exactly.
					if want := b[i] + s*c[i]; a[i] != want {
						t.Fatalf("%s %s n=%d off=%d: a[%d] = %v, want %v", k.ISA, k.Name, n, off, i, a[i], want)
					}
				}
			}
		}
	}
}

func TestGoLoadSumsB(t *testing.T) {
	b := Alloc(1000)
	fill(b, 1)
	load := goBandwidth[slices.IndexFunc(goBandwidth, func(k Bandwidth) bool { return k.Name == "load" })]
	load.Run(nil, b, nil, 0, 1)
	if got, want := math.Float64frombits(sink.Load()), loadGo(b); got != want || want == 0 {
		t.Errorf("sum %v, want %v", got, want)
	}
}

func TestTriadUsesShortestArray(t *testing.T) {
	ok, _ := BandwidthKernels()
	for _, k := range append(ok, goBandwidth...) {
		if k.Arrays == 1 {
			continue
		}
		a, b, c := Alloc(256), Alloc(128), Alloc(256)
		if k.Arrays == 2 { // b unused: c is the short one
			b, c = c, b
		}
		fill(b, 1)
		fill(c, 1)
		k.Run(a, b, c, 2, 1)
		if a[127] == 0 || a[128] != 0 {
			t.Errorf("%s %s: wrote a[127]=%v a[128]=%v, want only the first 128 elements", k.ISA, k.Name, a[127], a[128])
		}
	}
}

// TestRunMakesEveryPass checks that one call makes as many passes as it is
// asked for, on lengths of whole aligned blocks (where the assembly makes
// every pass in one call) and with a tail Go does, on the kernels whose
// result shows the count: daxpy, and the triads run in place (b = a), add
// s*c once a pass; update flips the sign once a pass.
func TestRunMakesEveryPass(t *testing.T) {
	ok, _ := BandwidthKernels()
	for _, k := range append(ok, goBandwidth...) {
		for _, n := range []int{256, 200} {
			for _, passes := range []int{0, 1, 3} {
				switch k.Name {
				case "daxpy", "triad", "triad-nt":
					a, c := Alloc(n)[:n], Alloc(n)[:n]
					fill(a, 1)
					fill(c, 2)
					was := slices.Clone(a)
					k.Run(a, a, c, 0.25, passes)
					for i := range a {
						// Quarters and small integers: every sum is exact.
						if want := was[i] + float64(passes)*0.25*c[i]; a[i] != want {
							t.Fatalf("%s %s, n=%d, %d passes: a[%d] = %v, want %v", k.ISA, k.Name, n, passes, i, a[i], want)
						}
					}
				case "update":
					b := Alloc(n)[:n]
					fill(b, 1)
					was := slices.Clone(b)
					k.Run(nil, b, nil, 0, passes)
					for i := range b {
						if want := was[i] * math.Pow(-1, float64(passes)); b[i] != want {
							t.Fatalf("%s update, n=%d, %d passes: b[%d] = %v, want %v", k.ISA, n, passes, i, b[i], want)
						}
					}
				}
			}
		}
	}
}
