// Package chart draws roofline charts from rprof's roofs and point
// documents: PNG, SVG and PDF through gonum.org/v1/plot, and a plain-text
// chart for terminals. It never prints; values it had to leave out are
// returned as notes for the caller to show.
package chart

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot/vg"

	"github.com/rprof/rprof/internal/output"
	"github.com/rprof/rprof/roofline"
)

// ErrFormat is returned for an output format the chart cannot be written in.
var ErrFormat = errors.New("unknown chart format")

// Formats are the file formats Write and Render produce.
var Formats = []string{"png", "svg", "pdf"}

// Options tune a chart. The zero value draws the roofs of the points' thread
// scope at the default size with a title naming CPU, threads and date.
type Options struct {
	// Threads selects the thread scope of the roofs drawn. 0: the scope
	// of the first point that has one, else the smallest measured.
	Threads int
	// Theoretical also draws each compute roof's theoretical peak, dashed.
	Theoretical bool
	// AllRoofs draws every compute roof. By default only the ceilings a
	// roofline reader looks for are drawn: per precision the highest FMA
	// roof and the highest scalar roof, and DGEMM.
	AllRoofs bool
	// Title replaces the default title.
	Title string
	// Width and Height of the image; 0 means 9 by 6 inches.
	Width, Height vg.Length
}

// FormatOf returns the chart format a file name asks for ("png", "svg",
// "pdf"), or an error wrapping ErrFormat.
func FormatOf(path string) (string, error) {
	ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(path), "."))
	if !slices.Contains(Formats, ext) {
		if ext == "" {
			return "", fmt.Errorf("%s: %w: no file extension (want .png, .svg or .pdf)", path, ErrFormat)
		}
		return "", fmt.Errorf("%s: %w %q (want .png, .svg or .pdf)", path, ErrFormat, "."+ext)
	}
	return ext, nil
}

// Write draws the roofline of roofs (which may be nil) and points (which
// may be empty, but not both) to path, in the format its extension names.
// The file appears whole or not at all. Notes say what was left out of the
// chart and why; they are not errors.
func Write(ctx context.Context, path string, roofs *roofline.Roofs, points []roofline.Point, opts Options) (notes []string, err error) {
	format, err := FormatOf(path)
	if err != nil {
		return nil, err
	}
	s, err := buildScene(roofs, points, opts)
	if err != nil {
		return nil, fmt.Errorf("draw %s: %w", path, err)
	}
	err = output.Write(ctx, path, nil, func(w io.Writer) error {
		return s.render(w, format, opts)
	})
	return s.notes, err
}

// Render draws the chart to w in format ("png", "svg" or "pdf").
func Render(w io.Writer, format string, roofs *roofline.Roofs, points []roofline.Point, opts Options) (notes []string, err error) {
	if !slices.Contains(Formats, format) {
		return nil, fmt.Errorf("%w %q (want png, svg or pdf)", ErrFormat, format)
	}
	s, err := buildScene(roofs, points, opts)
	if err != nil {
		return nil, err
	}
	if err := s.render(w, format, opts); err != nil {
		return nil, err
	}
	return s.notes, nil
}
