package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rprof/rprof/measure"
	"github.com/rprof/rprof/roofline"
)

func TestRunRefusesAnUnwritableOutputBeforeRunningTheTarget(t *testing.T) {
	dir := t.TempDir()
	notDir := filepath.Join(dir, "file")
	os.WriteFile(notDir, nil, 0o644)
	for name, out := range map[string]string{
		"missing directory": filepath.Join(dir, "missing", "p.json"),
		"parent is a file":  filepath.Join(notDir, "p.json"),
		"a directory":       dir,
	} {
		t.Run(name, func(t *testing.T) {
			marker := filepath.Join(dir, "ran")
			args := append([]string{"--work", "1", "--json", out, "--"}, targetArgv(t, "touch", marker)...)
			code, _, stderr := rprofRun(t, "", args...)
			if code != exitInternal || !strings.Contains(stderr, "cannot be written") {
				t.Errorf("exit %d, stderr %q; want 125 and why the output cannot be written", code, stderr)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Errorf("the target ran before the output was refused")
			}
			if _, err := os.Stat(filepath.Join(dir, "missing")); err == nil {
				t.Errorf("a directory was created")
			}
		})
	}
}

func TestRunWritesDevNullAndAFIFOInPlace(t *testing.T) {
	code, _, stderr := rprofRun(t, "", append([]string{"--work", "1", "--json", "/dev/null", "--"}, targetArgv(t, "exit", "0")...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if st, err := os.Stat("/dev/null"); err != nil || st.Mode()&fs.ModeCharDevice == 0 {
		t.Fatalf("/dev/null is no longer a character device: %v %v", st.Mode(), err)
	}

	fifo := filepath.Join(t.TempDir(), "point.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	got := make(chan []byte)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			got <- nil
			return
		}
		b, _ := io.ReadAll(f)
		f.Close()
		got <- b
	}()
	code, _, stderr = rprofRun(t, "", append([]string{"--work", "1", "--label", "through-fifo", "--json", fifo, "--"}, targetArgv(t, "exit", "0")...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b := <-got
	if !bytes.Contains(b, []byte(`"label": "through-fifo"`)) {
		t.Errorf("the FIFO's reader got %q, want the point", b)
	}
	if st, _ := os.Lstat(fifo); st.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced by a %v", st.Mode())
	}
}

func TestGateUpdateBaselineRefusesAnUnwritableBaselineBeforeMeasuring(t *testing.T) {
	measured := false
	fake := func(ctx context.Context, cfg measure.Config) (*roofline.Point, error) {
		measured = true
		return nil, context.Canceled
	}
	base := filepath.Join(t.TempDir(), "missing", "base.json")
	code, _, stderr := rprofMeasuring(t, fake, "gate", "--baseline", base, "--update-baseline", "--", "true")
	if code != exitInternal || !strings.Contains(stderr, "cannot be written") {
		t.Errorf("exit %d, stderr %q; want 125 and why the baseline cannot be written", code, stderr)
	}
	if measured {
		t.Errorf("measured before refusing the output")
	}
}

// openPTY returns the terminal end of a new pseudo-terminal.
func openPTY(t *testing.T) *os.File {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	t.Cleanup(func() { ptmx.Close() })
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Skipf("unlock pty: %v", err)
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Skipf("pty number: %v", err)
	}
	tty, err := os.OpenFile(filepath.Join("/dev/pts", strconv.Itoa(n)), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("open pty: %v", err)
	}
	t.Cleanup(func() { tty.Close() })
	return tty
}

func TestReportRefusesHTMLOnATerminal(t *testing.T) {
	tty := openPTY(t)
	var stderr bytes.Buffer
	code := run(context.Background(), []string{"report", "--roofs", "testdata/run/roofs.json"}, strings.NewReader(""), tty, &stderr)
	if code != exitUsage || !strings.Contains(stderr.String(), "terminal") {
		t.Errorf("exit %d, stderr %q; want a refusal to write HTML on a terminal", code, stderr.String())
	}
	// Markdown is text: a terminal may have it.
	code = run(context.Background(), []string{"report", "--format", "md", "--roofs", "testdata/run/roofs.json"}, strings.NewReader(""), tty, &stderr)
	if code != exitOK {
		t.Errorf("--format md on a terminal: exit %d: %s", code, stderr.String())
	}
}

// With --json -, standard output holds the document alone (for a pipe
// into jq); the target's standard output goes to standard error.
func TestRunJSONToStdoutKeepsTheTargetsOutputOut(t *testing.T) {
	code, stdout, stderr := rprofRun(t, "target says hello\n", append([]string{"--work", "1", "--label", "clean", "--json", "-", "--"}, targetArgv(t, "cat")...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var p roofline.Point
	if err := json.Unmarshal([]byte(stdout), &p); err != nil || p.Label != "clean" {
		t.Fatalf("stdout is not the point alone (%v):\n%s", err, stdout)
	}
	if !strings.Contains(stderr, "target says hello") {
		t.Errorf("the target's output is not on stderr:\n%s", stderr)
	}
}
