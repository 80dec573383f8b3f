package chart

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/rprof/rprof/roofline"

	"github.com/rprof/rprof/internal/unit"
)

// Size of the text chart's data area at most; with the axis labels it fits
// an 80-column terminal. The grid is cut to a whole number of cells per
// decade so that decade labels sit on their rows and columns.
const (
	textMaxCols = 68
	textMaxRows = 21
	textMargin  = 7 // "  100 |"
)

// WriteText draws the roofline as plain text, for terminals without an
// image viewer: a log-log grid where compute roofs are '-' (theoretical
// '.'), bandwidth roofs '/', ridge points 'x' and points capital letters,
// followed by a key giving every figure. Notes are as for Write.
func WriteText(w io.Writer, roofs *roofline.Roofs, points []roofline.Point, opts Options) (notes []string, err error) {
	s, err := buildScene(roofs, points, opts)
	if err != nil {
		return nil, err
	}
	bw := bufio.NewWriter(w)
	s.writeText(bw)
	if err := bw.Flush(); err != nil {
		return nil, fmt.Errorf("write text chart: %w", err)
	}
	return s.notes, nil
}

type textGrid struct {
	cells              [][]byte
	cols, rows         int
	xstep, ystep       int     // decades between axis labels
	lx0, lx1, ly0, ly1 float64 // log10 of the axis ranges
}

func newTextGrid(s *scene) *textGrid {
	g := &textGrid{lx0: math.Log10(s.xmin), lx1: math.Log10(s.xmax), ly0: math.Log10(s.ymin), ly1: math.Log10(s.ymax)}
	dx, dy := int(math.Round(g.lx1-g.lx0)), int(math.Round(g.ly1-g.ly0))
	g.cols, g.rows = textMaxCols, textMaxRows
	// Whole cells per decade, unless there are more decades than cells
	// (absurd figures), when only some decades get a label.
	if dx <= textMaxCols-1 {
		g.cols = (textMaxCols-1)/dx*dx + 1
	}
	if dy <= (textMaxRows-1)/2 {
		g.rows = (textMaxRows-1)/dy*dy + 1
	}
	g.xstep = max(1, (dx+7)/8)
	g.ystep = max(1, (dy+9)/10)
	g.cells = make([][]byte, g.rows)
	for r := range g.cells {
		g.cells[r] = []byte(strings.Repeat(" ", g.cols))
	}
	return g
}

func (g *textGrid) col(x float64) int {
	return int(math.Round((math.Log10(x) - g.lx0) / (g.lx1 - g.lx0) * float64(g.cols-1)))
}

func (g *textGrid) row(y float64) int {
	return g.rows - 1 - int(math.Round((math.Log10(y)-g.ly0)/(g.ly1-g.ly0)*float64(g.rows-1)))
}

// x returns the intensity at the centre of a column.
func (g *textGrid) x(col int) float64 {
	return math.Pow(10, g.lx0+float64(col)/float64(g.cols-1)*(g.lx1-g.lx0))
}

func (g *textGrid) set(col, row int, c byte) bool {
	if col < 0 || col >= g.cols || row < 0 || row >= g.rows {
		return false
	}
	g.cells[row][col] = c
	return true
}

func (s *scene) writeText(w io.Writer) {
	g := newTextGrid(s)
	bwCells := s.drawRoofs(g)
	key := s.tagRoofs(g, bwCells)
	for _, r := range s.ridges {
		g.set(g.col(r.intensity), g.row(r.gflops), 'x')
	}
	// A point sharing a cell with an earlier one moves right.
	for i, p := range s.points {
		col, row := g.col(p.x), g.row(p.y)
		for col < g.cols-1 && g.cells[row][col] >= 'A' && g.cells[row][col] <= 'Z' {
			col++
		}
		g.set(col, row, pointTag(i))
	}
	fmt.Fprint(w, wrap(s.title, ""))
	writeGrid(w, g)
	s.writeKey(w, key)
}

// drawRoofs draws the roof lines and returns the cells of each bandwidth
// roof, in s.bandwidth order.
func (s *scene) drawRoofs(g *textGrid) [][][2]int {
	rows := s.computeRows(g)
	// Bandwidth roofs first, so that compute roofs stay unbroken lines.
	bwCells := make([][][2]int, len(s.bandwidth))
	for i, b := range s.bandwidth {
		for col := g.col(b.from); col <= g.col(b.to); col++ {
			x := g.x(col)
			if x < b.from*0.999 || x > b.to*1.001 {
				continue
			}
			if row := g.row(b.value * x); g.set(col, row, '/') {
				bwCells[i] = append(bwCells[i], [2]int{col, row})
			}
		}
	}
	// Theoretical compute roofs before measured ones, so the measured
	// roof wins a shared row.
	for _, theoretical := range []bool{true, false} {
		for i, c := range s.compute {
			if c.theoretical != theoretical {
				continue
			}
			ch := byte('-')
			if theoretical {
				ch = '.'
			}
			row := rows[i]
			for col := g.col(c.from); col <= g.col(c.to); col++ {
				g.set(col, row, ch)
			}
		}
	}
	return bwCells
}

// computeRows gives each compute roof its grid row. Measured roofs that
// would share a row (fp64 FMA and DGEMM, a few percent apart) are moved
// down one row each, highest first, so every roof stays a line of its own;
// a theoretical roof keeps its own row, which its measured roof wins.
func (s *scene) computeRows(g *textGrid) []int {
	rows := make([]int, len(s.compute))
	last := -1
	for i, c := range s.compute { // highest first
		rows[i] = g.row(c.value)
		if c.theoretical {
			continue
		}
		if rows[i] <= last && last+1 < g.rows {
			rows[i] = last + 1
		}
		last = rows[i]
	}
	return rows
}

// tagRoofs tags each roof with a letter, compute roofs at their right end
// (moved left when a closer roof tagged that cell), bandwidth roofs where
// they start, and returns the key lines.
func (s *scene) tagRoofs(g *textGrid, bwCells [][][2]int) []string {
	var key []string
	tag := byte('a')
	isTag := func(c byte) bool { return c >= 'a' && c <= 'z' }
	rows := s.computeRows(g)
	for i, c := range s.compute {
		if c.theoretical {
			continue
		}
		row, col := rows[i], g.col(c.to)
		for col > 0 && isTag(g.cells[row][col]) {
			col--
		}
		g.set(col, row, tag)
		key = append(key, fmt.Sprintf("  %c  %s", tag, c.label("GFLOP/s")))
		tag++
	}
	for i, b := range s.bandwidth {
		// The first cell of the line not tagged by a close roof.
		for _, cell := range bwCells[i] {
			if !isTag(g.cells[cell[1]][cell[0]]) {
				g.set(cell[0], cell[1], tag)
				break
			}
		}
		key = append(key, fmt.Sprintf("  %c  %s", tag, b.label("GB/s")))
		tag++
	}
	return key
}

// writeGrid writes the grid with its decade-labelled axes.
func writeGrid(w io.Writer, g *textGrid) {
	fmt.Fprintln(w, "GFLOP/s")
	decadeRows := map[int]string{}
	for e := int(math.Round(g.ly0)); e <= int(math.Round(g.ly1)); e += g.ystep {
		decadeRows[g.row(math.Pow(10, float64(e)))] = decadeLabel(e)
	}
	for r := range g.rows {
		fmt.Fprintf(w, "%*s |%s\n", textMargin-2, decadeRows[r], strings.TrimRight(string(g.cells[r]), " "))
	}
	fmt.Fprintf(w, "%*s +%s\n", textMargin-2, "", strings.Repeat("-", g.cols))
	// Decade labels under the x axis, centred on their column.
	axis := []byte(strings.Repeat(" ", textMargin+g.cols+4))
	for e := int(math.Round(g.lx0)); e <= int(math.Round(g.lx1)); e += g.xstep {
		lbl := decadeLabel(e)
		at := textMargin + g.col(math.Pow(10, float64(e))) - len(lbl)/2
		at = max(0, min(at, len(axis)-len(lbl)))
		copy(axis[at:], lbl)
	}
	fmt.Fprintln(w, strings.TrimRight(string(axis), " "))
	fmt.Fprintf(w, "%*s%s\n", textMargin, "", "arithmetic intensity (FLOP per byte of DRAM traffic)")
}

// writeKey names the roofs, ridges and points the letters stand for.
func (s *scene) writeKey(w io.Writer, key []string) {
	if len(key) > 0 {
		fmt.Fprintln(w, "\nroofs ('-' measured, '.' theoretical, '/' bandwidth, 'x' ridge):")
		for _, k := range key {
			fmt.Fprint(w, wrap(k, "     "))
		}
	}
	if len(s.ridges) > 0 {
		parts := make([]string, len(s.ridges))
		for i, r := range s.ridges {
			parts[i] = r.level + " " + unit.Value(r.intensity)
		}
		fmt.Fprint(w, wrap(fmt.Sprintf("  x  ridge points at %s GFLOP/s, FLOP/byte: %s", unit.Value(s.ridges[0].gflops), strings.Join(parts, ", ")), "     "))
	}
	if len(s.points) > 0 {
		fmt.Fprintln(w, "\npoints:")
	}
	for i, p := range s.points {
		fmt.Fprint(w, wrap(fmt.Sprintf("  %c  %s", pointTag(i), p.describe()), "     "))
	}
}

// textWidth is the width the text chart's lines are wrapped to.
const textWidth = 80

// wrap breaks a line at spaces to textWidth columns, indenting the
// continuation lines, and ends it with a newline.
func wrap(line, indent string) string {
	var b strings.Builder
	col := 0
	for i, word := range strings.Split(line, " ") {
		n := len([]rune(word))
		switch {
		case i == 0:
		case col+1+n > textWidth && col > len(indent):
			b.WriteString("\n" + indent)
			col = len(indent)
		default:
			b.WriteByte(' ')
			col++
		}
		b.WriteString(word)
		col += n
	}
	b.WriteByte('\n')
	return b.String()
}

// pointTag is the letter of the i-th point: A to Z, then a digit.
func pointTag(i int) byte {
	if i < 26 {
		return byte('A' + i)
	}
	return byte('0' + (i-26)%10)
}

// describe says in one line what a point is and where it sits.
func (p placed) describe() string {
	s := fmt.Sprintf("%s: %s GFLOP/s", p.label, unit.Value(p.y))
	if p.hi > p.lo {
		s += fmt.Sprintf(" [%s, %s]", unit.Value(p.lo), unit.Value(p.hi))
	}
	s += fmt.Sprintf(" at %s FLOP/byte", unit.Value(p.x))
	if p.bound != "" {
		s += fmt.Sprintf(", %s-bound (%s), %s of attainable %s", p.bound, p.boundRoofLabel, unit.RoundPercent(p.fraction), unit.Value(p.attainable))
	}
	if p.analytic {
		s += ", analytic"
	}
	if len(p.flags) > 0 {
		s += ", flags: " + strings.Join(p.flags, ", ")
	}
	return s
}
