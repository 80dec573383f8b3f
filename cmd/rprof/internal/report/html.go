package report

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"strings"
	"sync"

	"github.com/rprof/rprof/cmd/rprof/internal/chart"
)

// HTML writes the report as one self-contained HTML page: the charts (one
// per thread scope of the points) are inline SVG and the style sheet is inline, so the file opens offline and
// can be attached to a pull request or CI run as it is.
func HTML(w io.Writer, in Input) (notes []string, err error) {
	v, err := buildView(in)
	if err != nil {
		return nil, err
	}
	var charts []template.HTML
	chartNotes, err := renderCharts(in, v.Threads, func(g scopeGroup, opts chart.Options) ([]string, error) {
		var svg bytes.Buffer
		notes, err := chart.Render(&svg, "svg", in.Roofs, g.points, opts)
		if err != nil {
			return nil, fmt.Errorf("draw chart: %w", err)
		}
		charts = append(charts, template.HTML(inlineSVG(svg.Bytes())))
		return notes, nil
	})
	if err != nil {
		return nil, err
	}
	v.Notes = append(chartNotes, v.Notes...)
	data := struct {
		*view
		Charts      []template.HTML
		Theoretical bool
	}{v, charts, in.Chart.Theoretical}
	if err := htmlTemplate().Execute(w, data); err != nil {
		return nil, fmt.Errorf("write HTML report: %w", err)
	}
	return v.Notes, nil
}

// inlineSVG drops the XML declaration and generator comment gonum writes
// before <svg>, which have no place inside HTML, and the embedded font
// (about 520 KB of base64 per report): the page's style sheet names
// Liberation Serif and its metric-compatible stand-ins, and where none is
// installed (stock Debian has only DejaVu) every label still keeps the
// width it was placed by, as the chart gives each its textLength.
func inlineSVG(b []byte) []byte {
	if i := bytes.Index(b, []byte("<svg")); i >= 0 {
		b = b[i:]
	}
	start, end := bytes.Index(b, []byte("<defs>")), bytes.Index(b, []byte("</defs>"))
	if start < 0 || end < start {
		return b
	}
	return append(b[:start:start], b[end+len("</defs>"):]...)
}

// words writes s so that a table cell breaks it only between words, and
// never inside a bracketed part ("[3.61, 3.65]", "(avx512-fma-fp64)"):
// a narrow column then grows a line rather than splitting "counters" or
// a roof's name.
func words(s string) template.HTML {
	var b strings.Builder
	depth, start := 0, 0
	flush := func(end int) {
		if end > start {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(`<span class="w">` + template.HTMLEscapeString(s[start:end]) + `</span>`)
		}
		start = end + 1
	}
	for i, r := range s {
		switch r {
		case '[', '(':
			depth++
		case ']', ')':
			depth = max(0, depth-1)
		case ' ':
			if depth == 0 {
				flush(i)
			}
		}
	}
	flush(len(s))
	return template.HTML(b.String())
}

// htmlTemplate is parsed on first use rather than at init, which every
// command, `rprof run` included, would pay for.
var htmlTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("report").Funcs(template.FuncMap{"words": words}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 80em; padding: 0 1em; color: #222; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.25em; border-bottom: 1px solid #ccc; padding-bottom: 0.2em; margin-top: 2em; }
h3 { font-size: 1.05em; }
table { border-collapse: collapse; margin: 0.5em 0 1em; font-size: 0.9em; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
td.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
th { background: #f4f4f4; }
.wide { overflow-x: auto; }
table.points { font-size: 0.85em; }
table.points td.n { white-space: normal; }
.w { white-space: nowrap; }
figure { margin: 0; }
figure svg { max-width: 100%; height: auto; }
figure svg text { font-family: "Liberation Serif", "Times New Roman", Tinos, Times, serif !important; font-size-adjust: 0.45; }
figcaption, .meta, .note { color: #555; font-size: 0.9em; }
.flag { color: #555; }
.flag.caution { color: #8a5300; }
.flag.warning { color: #c00; font-weight: bold; }
code { font-size: 0.9em; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<p class="meta">{{if .NoRoofs}}No roofs document: points only.{{else}}Roofs: <code>{{.RoofsFile}}</code>{{if .RoofsDate}}, measured {{.RoofsDate}}{{end}}.{{end}} Each point is charted and placed under the roofs of its own thread scope when they were measured, else under the {{.Threads}}-thread roofs.</p>

<section id="chart">
<h2>Roofline</h2>
<figure>{{range .Charts}}
{{.}}{{end}}
<figcaption>Log-log roofline. Across: arithmetic intensity, FLOP per byte of DRAM traffic; up: GFLOP/s. Lines: measured roofs, each labelled with its value and its confidence interval's half-width{{if .Theoretical}} (dashed: theoretical peaks){{end}}; crosses: ridge points; triangles: memory-bound points, squares: compute-bound; hollow: analytic; red: a point with a warning (above its roof, counts that disagree, a failed run; info and caution flags are listed in the table only). Error bars: confidence interval of GFLOP/s.</figcaption>
</figure>
{{with .Notes}}<p class="note">Notes:</p>
<ul class="note">{{range .}}
<li>{{.}}</li>{{end}}
</ul>{{end}}
</section>

<section id="machine">
<h2>Machine</h2>
<table>{{range .Machine}}
<tr><th>{{.Key}}</th><td>{{.Value}}</td></tr>{{end}}
</table>
</section>

<section id="roofs">
<h2>Roofs</h2>
{{if .NoRoofs}}<p>No roofs document was given: run <code>rprof roofs</code> or pass <code>--roofs FILE</code>.</p>{{else}}
<h3>Compute (GFLOP/s)</h3>
{{if .Compute}}<table>
<tr><th>roof</th><th>ISA</th><th>precision</th><th>threads</th><th>GFLOP/s</th><th>{{.RoofCI}}</th><th>theoretical</th><th>% of theoretical</th></tr>{{range .Compute}}
<tr><td>{{.Name}}</td><td>{{.ISA}}</td><td>{{.Precision}}</td><td class="n">{{.Threads}}</td><td class="n">{{.GFlops}}</td><td class="n">{{.CI}}</td><td class="n">{{.Theoretical}}</td><td class="n">{{.OfTheoretical}}</td></tr>{{end}}
</table>{{else}}<p>No compute roofs were measured.</p>{{end}}
<h3>Bandwidth (GB/s)</h3>
{{if .Bandwidth}}<table>
<tr><th>level</th><th>kernel</th><th>threads</th><th>GB/s</th><th>{{.RoofCI}}</th><th>working set</th></tr>{{range .Bandwidth}}
<tr><td>{{.Level}}</td><td>{{.Kernel}}</td><td class="n">{{.Threads}}</td><td class="n">{{.GBytesPerS}}</td><td class="n">{{.CI}}</td><td class="n">{{.WorkingSet}}</td></tr>{{end}}
</table>{{else}}<p>No bandwidth roofs were measured: points cannot be classified as memory- or compute-bound.</p>{{end}}
{{if .Tuning}}<p class="meta">Autotuning: {{.Tuning}}.</p>{{end}}
{{with .RoofFlags}}<p>Flags on the roofs:</p>
<ul>{{range .}}
<li><span class="flag {{.Severity}}">{{.Code}}</span> ({{.Severity}}): {{.Message}}</li>{{end}}
</ul>{{end}}{{end}}
</section>

<section id="points">
<h2>Points</h2>
{{if .Points}}<div class="wide"><table class="points">
<tr><th>point</th><th>source</th><th>threads</th><th>W (GFLOP)</th><th>Q (GB)</th><th>T (s) [{{.PointCI}}]</th><th>intensity (FLOP/B)</th><th>GFLOP/s [{{.PointCI}}]</th><th>bound</th><th>attainable (GFLOP/s)</th><th>of attainable</th><th>flags</th></tr>{{range .Points}}
<tr><td>{{words .Label}}</td><td>{{.Source}}</td><td class="n">{{words .Threads}}</td><td class="n">{{.Work}}</td><td class="n">{{.Traffic}}</td><td class="n">{{words .Seconds}}</td><td class="n">{{.Intensity}}</td><td class="n">{{words .GFlops}}</td><td>{{words .Bound}}</td><td class="n">{{.Attainable}}</td><td class="n">{{.Fraction}}</td><td>{{range $i, $f := .Flags}}{{if $i}}, {{end}}<span class="flag {{$f.Level}}">{{$f.Code}}</span><sup><a href="#fn{{$f.N}}">{{$f.N}}</a></sup>{{end}}</td></tr>{{end}}
</table></div>
{{with .Footnotes}}<ol class="note">{{range .}}
<li id="fn{{.N}}">{{.Point}}: <span class="flag {{.Level}}">{{.Code}}</span> ({{.Level}}): {{.Message}}</li>{{end}}
</ol>{{end}}{{else}}<p>No points were given.</p>{{end}}
</section>
{{if .Points}}
<section id="events">
<h2>Raw events</h2>{{range .Points}}
<h3>{{.Label}}</h3>
<p class="meta">Command: <code>{{.Command}}</code>; exit status {{.Exit}}{{if .Samples}}; wall time samples: {{.Samples}}{{end}}{{if .Overhead}}; overhead subtracted: {{.Overhead}}{{end}}.</p>
{{if .Events}}<table>
<tr><th>event</th><th>PMU</th><th>value (scaled)</th><th>raw</th><th>running</th><th>unit</th></tr>{{range .Events}}
<tr><td><code>{{.Name}}</code></td><td>{{.PMU}}</td><td class="n">{{.Value}}</td><td class="n">{{.Raw}}</td><td class="n">{{.Running}}</td><td>{{.Unit}}</td></tr>{{end}}
</table>{{else}}<p>No counter readings ({{.Source}} point).</p>{{end}}{{end}}
</section>{{end}}
</body>
</html>
`))
})
