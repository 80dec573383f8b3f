package report

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	stdhtml "html"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rprof/rprof/cmd/rprof/internal/chart"
	"github.com/rprof/rprof/internal/docfile"
	"github.com/rprof/rprof/internal/testutil"
	"github.com/rprof/rprof/roofline"
)

const fixtures = "../../../../roofline/testdata/"

func input(t *testing.T, roofs string, opts chart.Options, points ...string) Input {
	t.Helper()
	in := Input{Chart: opts}
	if roofs != "" {
		r, err := docfile.ReadRoofs(fixtures + roofs)
		if err != nil {
			t.Fatal(err)
		}
		in.Roofs, in.RoofsPath = r, roofs
	}
	for _, n := range points {
		p, err := docfile.ReadPoints(fixtures + n)
		if err != nil {
			t.Fatal(err)
		}
		in.Points = append(in.Points, p...)
	}
	return in
}

var allPoints = []string{"point_triad.json", "point_dgemm.json", "point_above_roof.json", "point_no_traffic.json", "points_set.json"}

// elideFonts replaces the chart's embedded font (500 kB of base64) by its
// size, so golden files stay readable.
func elideFonts(b []byte) []byte {
	return embeddedFont.ReplaceAllFunc(b, func(m []byte) []byte {
		return fmt.Appendf(nil, "base64,<%d bytes of font>", len(m)-len("base64,"))
	})
}

var embeddedFont = regexp.MustCompile(`base64,[A-Za-z0-9+/=]+`)

var cases = []struct {
	name   string
	roofs  string
	opts   chart.Options
	points []string
}{
	// One point above its roof, one with unknown intensity, an analytic
	// one and one measured at another thread scope.
	{"full", "roofs_zen5_vm.json", chart.Options{Theoretical: true}, allPoints},
	{"compute-only", "roofs_compute_only.json", chart.Options{}, []string{"point_triad.json", "point_dgemm.json"}},
	{"no-roofs", "", chart.Options{Title: "Points without roofs"}, []string{"point_triad.json"}},
	{"no-points", "roofs_zen5_vm.json", chart.Options{Threads: 2}, nil},
}

func TestReportsMatchGolden(t *testing.T) {
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			in := input(t, tt.roofs, tt.opts, tt.points...)
			var html, md bytes.Buffer
			htmlNotes, err := HTML(&html, in)
			if err != nil {
				t.Fatal(err)
			}
			mdNotes, err := Markdown(&md, in)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(htmlNotes, "\n") != strings.Join(mdNotes, "\n") {
				t.Errorf("HTML notes %q differ from Markdown notes %q", htmlNotes, mdNotes)
			}
			testutil.Golden(t, filepath.Join("testdata", tt.name+".html"), elideFonts(html.Bytes()))
			testutil.Golden(t, filepath.Join("testdata", tt.name+".md"), md.Bytes())
		})
	}
}

func TestReportNeedsRoofsOrPoints(t *testing.T) {
	for name, write := range map[string]func(*bytes.Buffer, Input) ([]string, error){
		"html": func(b *bytes.Buffer, in Input) ([]string, error) { return HTML(b, in) },
		"md":   func(b *bytes.Buffer, in Input) ([]string, error) { return Markdown(b, in) },
	} {
		var b bytes.Buffer
		if _, err := write(&b, Input{}); err == nil || !strings.Contains(err.Error(), "no points and no roofs") {
			t.Errorf("%s: error %v, want one saying there is nothing to report", name, err)
		}
	}
}

// A report is attached to pull requests and opened offline: nothing in it
// may be fetched from elsewhere.
func TestHTMLIsSelfContained(t *testing.T) {
	var b bytes.Buffer
	if _, err := HTML(&b, input(t, "roofs_zen5_vm.json", chart.Options{}, allPoints...)); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, bad := range []string{"<script", "<link", "<img", "<iframe", " src=", "@import", "url(http", `href="http`, `href="//`} {
		if strings.Contains(html, bad) {
			t.Errorf("report contains %q", bad)
		}
	}
	if !strings.Contains(html, "<svg") || strings.Contains(html, "<?xml") {
		t.Error("chart is not inline SVG without an XML declaration")
	}
	// Two charts (1 and 2 threads), no embedded font: a report is tens
	// of KB, not the 520 KB a base64 font made it.
	if n, f := strings.Count(html, "<svg"), strings.Count(html, "@font-face"); n != 2 || f != 0 {
		t.Errorf("%d charts and %d embedded fonts, want 2 charts and no font", n, f)
	}
	if len(html) > 100<<10 {
		t.Errorf("report of two charts is %d KB, want under 100 KB", len(html)>>10)
	}
}

// Labels come from the command line of whoever ran rprof run: they are
// text, never markup, in the page and in its chart.
func TestLabelsAreEscaped(t *testing.T) {
	in := input(t, "roofs_zen5_vm.json", chart.Options{}, "point_triad.json")
	in.Points[0].Label = `<script>alert("x")</script> | *a_b*`
	var html, md bytes.Buffer
	if _, err := HTML(&html, in); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(html.String(), "<script") || !strings.Contains(html.String(), "&lt;script&gt;") {
		t.Error("label not escaped in the HTML report")
	}
	if _, err := Markdown(&md, in); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), `&lt;script&gt;alert("x")&lt;/script&gt; \| \*a\_b\*`) {
		t.Errorf("label not escaped in the Markdown report:\n%s", md.String())
	}
}

// TestHTMLRendersInChromium opens the report in headless Chromium at
// 1400 px, as a reader on a machine with only the DejaVu fonts would: the
// page must load without console messages, the DOM must hold the chart
// and the tables, the screenshot must show the roofs drawn, and a script
// run in the page (added to a copy; the report itself has none) measures
// the layout: every chart label inside its chart at the width it was laid
// out with, the points table without a sideways scroll bar, and no word
// of a table broken across lines. With -update the screenshot is copied
// to docs/report.png.
func TestHTMLRendersInChromium(t *testing.T) {
	bin := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		t.Skip("unmet requirement: no chromium on PATH (Debian: apt-get install chromium)")
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	var b bytes.Buffer
	if _, err := HTML(&b, input(t, "roofs_zen5_vm.json", chart.Options{Theoretical: true}, allPoints...)); err != nil {
		t.Fatal(err)
	}
	html := strings.Replace(b.String(), "</body>", "<script>"+layoutCheck+"</script>\n</body>", 1)
	if err := os.WriteFile(page, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, "shot.png")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--enable-logging=stderr", "--v=0",
		"--hide-scrollbars", "--force-device-scale-factor=1",
		"--window-size=1400,3200", "--screenshot="+shot, "--dump-dom", "file://"+page)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	// Chromium logs every console message, error or not, as CONSOLE.
	for _, line := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(line, ":CONSOLE") {
			t.Errorf("console message: %s", line)
		}
	}
	dom := stdout.String()
	for _, want := range []string{"<svg", "Roofline report", "fixture: stream triad", "(DRAM)", "avx512-fma-fp64"} {
		if !strings.Contains(dom, want) {
			t.Errorf("rendered DOM lacks %q", want)
		}
	}
	checkLayout(t, dom)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v\n%s", err, stderr.String())
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	// The DRAM roof's green (#5aae61) appears only when the SVG chart was
	// drawn.
	n := countColor(img, 0x5a, 0xae, 0x61)
	t.Logf("screenshot: %d pixels of the DRAM roof's colour", n)
	if n < 50 {
		t.Errorf("screenshot has %d pixels of the DRAM roof's colour, want the chart drawn", n)
	}
	if testutil.Updating() && !t.Failed() {
		png, err := os.ReadFile(shot)
		if err == nil {
			err = os.WriteFile("../../../../docs/report.png", png, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// layoutCheck runs in the rendered page and writes what it found wrong as
// a JSON list of strings into <pre id="layout">, which --dump-dom returns.
const layoutCheck = `(function () {
  var bad = [], texts = 0;
  document.querySelectorAll("figure svg").forEach(function (svg, i) {
    var box = svg.getBoundingClientRect();
    svg.querySelectorAll("text").forEach(function (t) {
      var s = t.textContent.trim();
      if (!s) return;
      texts++;
      var r = t.getBoundingClientRect();
      if (r.left < box.left - 1 || r.right > box.right + 1 || r.top < box.top - 1 || r.bottom > box.bottom + 1)
        bad.push("chart " + i + ": label clipped: " + s + ": [" + [r.left, r.top, r.right, r.bottom].map(Math.round) + "] outside [" + [box.left, box.top, box.right, box.bottom].map(Math.round) + "]");
      var want = t.textLength.baseVal.value, got = t.getBBox().width;
      if (!(want > 0) || Math.abs(got - want) > 0.02 * want + 1)
        bad.push("chart " + i + ": label " + got.toFixed(1) + " wide, laid out " + want.toFixed(1) + ": " + s);
    });
  });
  if (texts < 20) bad.push("only " + texts + " chart labels");
  document.querySelectorAll(".wide").forEach(function (d) {
    if (d.scrollWidth > d.clientWidth + 1) bad.push("table scrolls sideways: " + d.scrollWidth + " px in " + d.clientWidth);
  });
  document.querySelectorAll("td, th").forEach(function (c) {
    var w = document.createTreeWalker(c, NodeFilter.SHOW_TEXT), n;
    while ((n = w.nextNode())) {
      var re = /\S+/g, m;
      while ((m = re.exec(n.data))) {
        var rg = document.createRange();
        rg.setStart(n, m.index);
        rg.setEnd(n, m.index + m[0].length);
        if (rg.getClientRects().length > 1) bad.push("word broken across lines: " + m[0]);
      }
    }
  });
  var pre = document.createElement("pre");
  pre.id = "layout";
  pre.textContent = JSON.stringify(bad);
  document.body.appendChild(pre);
})();`

// checkLayout fails the test with each problem layoutCheck found in dom.
func checkLayout(t *testing.T, dom string) {
	t.Helper()
	m := regexp.MustCompile(`(?s)<pre id="layout">(.*?)</pre>`).FindStringSubmatch(dom)
	if m == nil {
		t.Fatal("the layout check did not run: no <pre id=\"layout\"> in the rendered DOM")
	}
	var bad []string
	if err := json.Unmarshal([]byte(stdhtml.UnescapeString(m[1])), &bad); err != nil {
		t.Fatalf("layout check result %q: %v", m[1], err)
	}
	for _, b := range bad {
		t.Error(b)
	}
}

func countColor(img image.Image, r, g, b uint8) int {
	near := func(a uint32, want uint8) bool { d := int(a>>8) - int(want); return d > -12 && d < 12 }
	n := 0
	bounds := img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			if near(cr, r) && near(cg, g) && near(cb, b) {
				n++
			}
		}
	}
	return n
}

// TestSamplesTextWording: one sample has no interval, and says so instead of
// "95% CI by none" (issue 14, "Wording").
func TestSamplesTextWording(t *testing.T) {
	tests := []struct {
		name string
		p    roofline.Point
		want string
	}{
		{"single sample", roofline.Point{Samples: roofline.Samples{Seconds: []float64{0.0052}}, CI: roofline.Uncertainty{Confidence: 0.95, Method: "none", N: 1}}, "n=1, 0.00520 s; no interval from a single sample"},
		{"five samples", roofline.Point{Samples: roofline.Samples{Seconds: []float64{1, 1, 1, 1, 1}}, CI: roofline.Uncertainty{Confidence: 0.95, Method: "student-t", N: 5}}, "; 95% CI by student-t"},
	}
	for _, tt := range tests {
		if got := samplesText(&tt.p); !strings.HasSuffix(got, tt.want) {
			t.Errorf("%s: %q, want it to end in %q", tt.name, got, tt.want)
		}
	}
}
