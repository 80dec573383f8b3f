// Command record times a busy loop on this machine to make the recorded
// samples of the gate's decision-rule tests:
//
//	go run ./cmd/rprof/internal/gate/testdata/record -out cmd/rprof/internal/gate/testdata
//
// It writes four point documents. slowdown-old and slowdown-new time a loop
// of n iterations and of n*(1+slowdown), interleaved so that drifts of the
// machine hit both alike. noise-old and noise-new are two batches of the
// unchanged loop, taken apart in time, whose means differ by about as much:
// of all the batches recorded, the pair whose ratio is closest to
// 1+slowdown.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"log"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rprof/rprof/internal/stats"
	"github.com/rprof/rprof/roofline"
)

var sink uint64

func spin(n int) float64 {
	start := time.Now()
	x := uint64(1)
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	sink += x
	return time.Since(start).Seconds()
}

func main() {
	n := flag.Int("n", 40_000_000, "loop iterations of the baseline")
	slowdown := flag.Float64("slowdown", 0.03, "relative growth of the loop count of the slower run")
	reps := flag.Int("reps", 15, "repetitions of each slowdown run")
	batches := flag.Int("batches", 10, "batches of the unchanged loop, for the noise pair")
	batch := flag.Int("batch", 5, "repetitions per noise batch")
	out := flag.String("out", ".", "directory to write the point documents to")
	flag.Parse()

	machine := thisMachine()
	base, slow := make([]float64, *reps), make([]float64, *reps)
	for i := 0; i < *reps; i++ {
		base[i] = spin(*n)
		slow[i] = spin(int(float64(*n) * (1 + *slowdown)))
	}
	var noise [][]float64
	for b := 0; b < *batches; b++ {
		xs := make([]float64, *batch)
		for i := range xs {
			xs[i] = spin(*n)
		}
		noise = append(noise, xs)
		time.Sleep(200 * time.Millisecond)
	}
	bi, bj, best := 0, 0, math.Inf(1)
	for i := range noise {
		for j := range noise {
			if d := math.Abs(mean(noise[j])/mean(noise[i]) - 1 - *slowdown); i != j && d < best {
				bi, bj, best = i, j, d
			}
		}
	}
	cmd := []string{"spin", strconv.Itoa(*n)}
	write(*out, "slowdown-old", point(cmd, base, machine))
	write(*out, "slowdown-new", point([]string{"spin", strconv.Itoa(int(float64(*n) * (1 + *slowdown)))}, slow, machine))
	write(*out, "noise-old", point(cmd, noise[bi], machine))
	write(*out, "noise-new", point(cmd, noise[bj], machine))
}

func mean(xs []float64) float64 {
	var w stats.Welford
	for _, x := range xs {
		w.Add(x)
	}
	return w.Mean()
}

func point(cmd []string, secs []float64, m roofline.Machine) roofline.Point {
	var w stats.Welford
	for _, x := range secs {
		w.Add(x)
	}
	lo, hi := w.MeanCI(0.95)
	return roofline.Point{
		Schema: roofline.PointSchema, Label: "spin", Command: cmd,
		Created: time.Now().UTC().Truncate(time.Second), Source: "events",
		Seconds: w.Mean(),
		CI: roofline.Uncertainty{Confidence: 0.95, Method: stats.CIMethod(w.N()), N: w.N(),
			Seconds: roofline.Interval{Lo: lo, Hi: hi}},
		Samples: roofline.Samples{Seconds: secs},
		Flags:   []roofline.Flag{},
		Events:  []roofline.EventCount{},
		Machine: m,
	}
}

// thisMachine reads the CPU's identity from /proc/cpuinfo.
func thisMachine() roofline.Machine {
	var m roofline.Machine
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		k, v, ok := strings.Cut(s.Text(), ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch k {
		case "vendor_id":
			m.CPU.Vendor = v
		case "cpu family":
			m.CPU.Family, _ = strconv.Atoi(v)
		case "model":
			m.CPU.Model, _ = strconv.Atoi(v)
		case "model name":
			m.CPU.ModelName = v
		case "flags":
			m.VM = strings.Contains(" "+v+" ", " hypervisor ")
		case "processor":
			m.Threads++
		}
	}
	return m
}

func write(dir, name string, p roofline.Point) {
	path := filepath.Join(dir, name+".json")
	var doc bytes.Buffer
	if err := roofline.Encode(&doc, p); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(path, doc.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "%s: mean %.6f s, n=%d\n", path, p.Seconds, len(p.Samples.Seconds))
}
