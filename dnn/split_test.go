package dnn

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
)

// programBytes is what a capture must pass through: every byte of the
// stream except the verbose lines and their newlines.
func programBytes(stream []byte) []byte {
	var out []byte
	for len(stream) > 0 {
		i := bytes.IndexByte(stream, '\n')
		line := stream
		if i >= 0 {
			line = stream[:i+1]
		}
		if !IsVerbose(string(line)) {
			out = append(out, line...)
		}
		stream = stream[len(line):]
	}
	return out
}

// The captured stdout of the C program mixes 23 verbose lines with its own
// output, which ends with a byte that is not text and a line without a
// newline.
func TestSplitterPassesTheProgramsBytesThroughUnchanged(t *testing.T) {
	stream, err := os.ReadFile("testdata/stdout-2.6.3-allkinds.bin")
	if err != nil {
		t.Fatal(err)
	}
	want := programBytes(stream)
	if !bytes.Contains(want, []byte{0xff}) || !bytes.HasSuffix(want, []byte("without newline")) {
		t.Fatalf("fixture lacks its binary byte or partial line")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 50; trial++ {
		var out bytes.Buffer
		tr := &Trace{KeepRecords: true}
		s := &Splitter{Out: &out, Line: tr.Add}
		for rest := stream; len(rest) > 0; {
			n := min(len(rest), 1+rng.IntN(40))
			if _, err := s.Write(rest[:n]); err != nil {
				t.Fatal(err)
			}
			rest = rest[n:]
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out.Bytes(), want) {
			t.Fatalf("trial %d: passed through %q, want %q", trial, out.Bytes(), want)
		}
		if tr.Verbose != 23 || len(tr.Records) != 18 || tr.Skipped != 0 {
			t.Fatalf("trial %d: verbose %d records %d skipped %d", trial, tr.Verbose, len(tr.Records), tr.Skipped)
		}
	}
}

func TestSplitterEdgeCases(t *testing.T) {
	for _, tc := range []struct {
		name, in, out string
		lines         []string
	}{
		{"marker prefix then other text", "onednn_verbosity\n", "onednn_verbosity\n", nil},
		{"partial marker at end", "dnnl_verb", "dnnl_verb", nil},
		{"verbose line cut short at end", "a\nonednn_verbose,exec,cpu", "a\n", []string{"onednn_verbose,exec,cpu"}},
		{"marker not at line start", "x onednn_verbose,exec\n", "x onednn_verbose,exec\n", nil},
		{"empty lines", "\n\n", "\n\n", nil},
		{"crlf kept", "out\r\nonednn_verbose,info,x\r\n", "out\r\n", []string{"onednn_verbose,info,x\r"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			var lines []string
			s := &Splitter{Out: &out, Line: func(l string) { lines = append(lines, l) }}
			for i := 0; i < len(tc.in); i++ { // one byte at a time: the hardest split
				s.Write([]byte{tc.in[i]})
			}
			s.Close()
			if out.String() != tc.out || strings.Join(lines, "|") != strings.Join(tc.lines, "|") {
				t.Errorf("out %q lines %q, want %q %q", out.String(), lines, tc.out, tc.lines)
			}
		})
	}
}

func TestWhySaysWhyATraceIsEmpty(t *testing.T) {
	empty := &Trace{}
	if !strings.Contains(empty.Why(), "did not load oneDNN") {
		t.Errorf("empty trace: %q", empty.Why())
	}
	header := &Trace{}
	header.Add("onednn_verbose,info,oneDNN v2.6.3 (commit N/A)")
	if !strings.Contains(header.Why(), "executed no primitive") {
		t.Errorf("header only: %q", header.Why())
	}
	foreign := &Trace{}
	foreign.Add("onednn_verbose,exec,cpu,reorder,jit:uni")
	if !strings.Contains(foreign.Why(), "does not read") {
		t.Errorf("unparsable: %q", foreign.Why())
	}
}

// A verbose line of any length is held to MaxLine bytes and quoted cut to
// a few hundred: a program that prints a gigabyte on one line costs no
// gigabyte.
func TestSplitterHoldsAnOverlongVerboseLineToMaxLine(t *testing.T) {
	const size = 4 * MaxLine
	tr := &Trace{}
	var out bytes.Buffer
	s := tr.Splitter(&out)
	s.Write([]byte("before\nonednn_verbose,exec,cpu,"))
	chunk := bytes.Repeat([]byte("x"), 1000)
	written := len("onednn_verbose,exec,cpu,")
	for written < size {
		s.Write(chunk)
		written += len(chunk)
	}
	s.Write([]byte("\nafter\n"))
	s.Close()
	if out.String() != "before\nafter\n" {
		t.Errorf("passed through %q", out.String())
	}
	if cap(s.buf) > 2*MaxLine {
		t.Errorf("held %d bytes, want at most about MaxLine (%d)", cap(s.buf), MaxLine)
	}
	if tr.Verbose != 1 || tr.Skipped != 1 || len(tr.Examples) != 1 {
		t.Fatalf("verbose %d skipped %d examples %d, want the line counted as skipped", tr.Verbose, tr.Skipped, len(tr.Examples))
	}
	ex := tr.Examples[0]
	if len(ex) > 2*exampleBytes || !strings.HasPrefix(ex, "onednn_verbose,exec,cpu,xxx") || !strings.Contains(ex, fmt.Sprintf("(%d bytes in all)", written)) {
		t.Errorf("example %q (%d bytes): want the line's start, cut, and its length", ex[:min(len(ex), 400)], len(ex))
	}
	if why := tr.Why(); len(why) > 1000 {
		t.Errorf("Why quotes %d bytes", len(why))
	}
}

func TestTraceKeepsGroupsNotRecords(t *testing.T) {
	kept := readTrace(t, "testdata/capture-3.7.2-allkinds.txt")
	text, err := os.ReadFile("testdata/capture-3.7.2-allkinds.txt")
	if err != nil {
		t.Fatal(err)
	}
	tr := &Trace{}
	s := tr.Splitter(io.Discard)
	s.Write(text)
	s.Close()
	if tr.Records != nil {
		t.Errorf("kept %d records without KeepRecords", len(tr.Records))
	}
	if err := tr.Join(nil); err == nil {
		t.Error("joined calls to a trace that kept no execution order")
	}
	want, got := GroupExecs(kept.Records), tr.Groups()
	if len(got) != len(want) || len(got) == 0 || tr.Execs() != kept.Execs() {
		t.Fatalf("%d groups of %d executions, want %d of %d", len(got), tr.Execs(), len(want), kept.Execs())
	}
	for i := range got {
		if got[i].Label() != want[i].Label() || !slices.Equal(got[i].Millis, want[i].Millis) || got[i].Execs != nil {
			t.Errorf("group %d: %s %v, want %s %v", i, got[i].Label(), got[i].Millis, want[i].Label(), want[i].Millis)
		}
	}
}
