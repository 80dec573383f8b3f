// Package ncu reads Nsight Compute's CSV export (ncu --csv --page raw,
// one launch a row, one metric a column, a row of units under the
// header; the details page's long form, one metric a row, is read too)
// and turns each kernel into a roofline point: W from the FP64, FP32 and
// FP16 add, multiply and FMA thread instructions (FMA counted twice), Q
// by level from the DRAM, L2 and L1 bytes, T from the GPU time, each
// summed over the kernel's launches. A kernel missing a metric W, Q or T
// needs is named with what it lacks, and the rest are placed.
package ncu

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/rprof/rprof/gpu/metrics"
)

// The metrics read.
const (
	MetricTime     = "gpu__time_duration.sum"
	MetricSMClock  = "sm__cycles_elapsed.avg.per_second"
	MetricMemClock = "dram__cycles_elapsed.avg.per_second"
	// MetricDeviceName is text, not a figure.
	MetricDeviceName = "device__attribute_display_name"
)

// Required are the metrics a kernel must have to be placed: its nine
// instruction counts, its DRAM bytes and its time.
func Required() []string { return append(metrics.Required(), MetricTime) }

// Launch is one profiled kernel launch.
type Launch struct {
	ID     string
	Kernel string
	Device int
	CC     string
	// Values are the figures in base units (bytes, seconds, instructions,
	// hertz); a metric the report gives as n/a or with a unit rprof does
	// not know is absent, and Problems says why.
	Values     map[string]float64
	DeviceName string
	Problems   map[string]string
}

// ErrFormat is a file that is not an ncu CSV export.
var ErrFormat = errors.New("not an Nsight Compute CSV export (ncu --csv --page raw)")

// identity are the raw page's columns before the metrics.
var identity = []string{"ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size", "Grid Size", "Device", "CC"}

// Parse reads an export. Lines before the header (ncu's ==PROF== progress
// lines, a program's own output) are skipped.
func Parse(r io.Reader) ([]Launch, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = true
	var header []string
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return nil, fmt.Errorf("%w: no header row with \"ID\" and \"Kernel Name\"", ErrFormat)
		}
		if err != nil {
			continue // a line of other output that is not CSV
		}
		if len(rec) > 0 && rec[0] == "ID" && slices.Contains(rec, "Kernel Name") {
			header = rec
			break
		}
	}
	col := map[string]int{}
	for i, h := range header {
		col[h] = i
	}
	if _, ok := col["Metric Name"]; ok {
		return parseLong(cr, col)
	}
	return parseWide(cr, header, col)
}

func newLaunch(rec []string, col map[string]int) Launch {
	get := func(name string) string {
		if i, ok := col[name]; ok && i < len(rec) {
			return rec[i]
		}
		return ""
	}
	dev, _ := strconv.Atoi(get("Device"))
	return Launch{ID: get("ID"), Kernel: get("Kernel Name"), Device: dev, CC: get("CC"),
		Values: map[string]float64{}, Problems: map[string]string{}}
}

// set records a metric's value with its unit.
func (l *Launch) set(metric, unit, text string) {
	if metric == MetricDeviceName {
		l.DeviceName = text
		return
	}
	v, err := value(text, unit)
	if err != nil {
		l.Problems[metric] = err.Error()
		return
	}
	l.Values[metric] = v
}

// each calls f with every remaining record.
func each(cr *csv.Reader, f func(rec []string)) error {
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: %v", ErrFormat, err)
		}
		f(rec)
	}
}

func parseWide(cr *csv.Reader, header []string, col map[string]int) ([]Launch, error) {
	var units []string
	var out []Launch
	err := each(cr, func(rec []string) {
		if units == nil && len(rec) > 0 && rec[0] == "" {
			units = rec // the row of units under the header
			return
		}
		l := newLaunch(rec, col)
		for i, name := range header {
			if slices.Contains(identity, name) || i >= len(rec) {
				continue
			}
			unit := ""
			if i < len(units) {
				unit = units[i]
			}
			l.set(name, unit, rec[i])
		}
		out = append(out, l)
	})
	return out, err
}

func parseLong(cr *csv.Reader, col map[string]int) ([]Launch, error) {
	byID := map[string]int{}
	var out []Launch
	err := each(cr, func(rec []string) {
		field := func(name string) string {
			if i := col[name]; i < len(rec) {
				return rec[i]
			}
			return ""
		}
		l := newLaunch(rec, col)
		i, ok := byID[l.ID]
		if !ok {
			i = len(out)
			byID[l.ID] = i
			out = append(out, l)
		}
		out[i].set(field("Metric Name"), field("Metric Unit"), field("Metric Value"))
	})
	return out, err
}

// units are the scale of each unit ncu prints to rprof's base units
// (bytes, seconds, instructions, hertz). ncu scales by powers of 1000.
var units = map[string]float64{
	"": 1, "byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "Tbyte": 1e12,
	"inst": 1, "Kinst": 1e3, "Minst": 1e6, "Ginst": 1e9, "Tinst": 1e12,
	"nsecond": 1e-9, "usecond": 1e-6, "msecond": 1e-3, "second": 1,
	"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1,
	"hz": 1, "Khz": 1e3, "Mhz": 1e6, "Ghz": 1e9,
	"cycle/second": 1, "cycle/msecond": 1e3, "cycle/usecond": 1e6, "cycle/nsecond": 1e9,
}

// value reads a figure ("1,234.5": ncu groups thousands) in its unit.
func value(text, unit string) (float64, error) {
	if text == "" || text == "n/a" {
		return 0, errors.New("not collected (n/a)")
	}
	scale, ok := units[unit]
	if !ok {
		return 0, fmt.Errorf("unit %q not understood", unit)
	}
	v, err := strconv.ParseFloat(strings.ReplaceAll(text, ",", ""), 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%q is not a count", text)
	}
	return v * scale, nil
}
