package dnn

import (
	"bytes"
	"io"
	"strings"
)

// Splitter separates oneDNN's verbose lines from a program's own output,
// which shares its stdout. Bytes of the program's lines go to Out as they
// arrive and unchanged (partial lines and binary data included); only a
// line that starts with a verbose marker is held back whole and handed to
// Line, without its newline. A line's first bytes are held only while they
// could still be the start of a marker. A verbose line longer than
// MaxLine is not held whole: Long gets its first MaxLine bytes and its
// length instead (dropped when Long is nil).
type Splitter struct {
	Out  io.Writer
	Line func(line string)
	Long func(head string, size int)

	buf  []byte
	size int // of the verbose line in buf, bytes beyond MaxLine included
	mode int // atStart, program or verbose
}

// MaxLine bounds the verbose line a Splitter holds. oneDNN's lines are a
// few hundred bytes, a few KB with long post-op chains.
const MaxLine = 64 << 10

// Splitter is a Splitter that gives t the verbose lines.
func (t *Trace) Splitter(out io.Writer) *Splitter {
	return &Splitter{Out: out, Line: t.Add, Long: t.addLong}
}

const (
	atStart = iota // deciding: buf holds a prefix of a marker
	program        // the rest of the line is the program's
	verbose        // buf holds a verbose line
)

// Write implements io.Writer. It returns an error only when Out fails.
func (s *Splitter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		switch s.mode {
		case program:
			i := bytes.IndexByte(p, '\n')
			if i < 0 {
				return n, s.out(p)
			}
			if err := s.out(p[:i+1]); err != nil {
				return n, err
			}
			p, s.mode = p[i+1:], atStart
		case verbose:
			i := bytes.IndexByte(p, '\n')
			if i < 0 {
				s.hold(p)
				return n, nil
			}
			s.hold(p[:i])
			s.line()
			s.mode, p = atStart, p[i+1:]
		default:
			c := p[0]
			p = p[1:]
			s.buf = append(s.buf, c)
			if c == '\n' {
				err := s.out(s.buf)
				s.buf = s.buf[:0]
				if err != nil {
					return n, err
				}
				continue
			}
			full, prefix := markerMatch(s.buf)
			switch {
			case full:
				s.mode, s.size = verbose, len(s.buf)
			case !prefix:
				err := s.out(s.buf)
				s.buf, s.mode = s.buf[:0], program
				if err != nil {
					return n, err
				}
			}
		}
	}
	return n, nil
}

// Close hands on what is left at the end of the stream: a partial program
// line to Out, a verbose line cut short to Line.
func (s *Splitter) Close() error {
	defer func() { s.buf, s.mode = s.buf[:0], atStart }()
	if len(s.buf) == 0 {
		return nil
	}
	if s.mode == verbose {
		s.line()
		return nil
	}
	return s.out(s.buf)
}

// hold adds p to the verbose line, keeping at most MaxLine bytes of it.
func (s *Splitter) hold(p []byte) {
	s.size += len(p)
	if room := MaxLine - len(s.buf); room > 0 {
		s.buf = append(s.buf, p[:min(room, len(p))]...)
	}
}

// line hands on the verbose line held, whole or cut, and empties buf.
func (s *Splitter) line() {
	switch {
	case s.size <= MaxLine:
		s.Line(string(s.buf))
	case s.Long != nil:
		s.Long(string(s.buf), s.size)
	}
	s.buf, s.size = s.buf[:0], 0
}

func (s *Splitter) out(p []byte) error {
	_, err := s.Out.Write(p)
	return err
}

// markerMatch reports whether b is a whole marker, or a prefix of one.
func markerMatch(b []byte) (full, prefix bool) {
	for _, m := range markers {
		if len(b) <= len(m) && m[:len(b)] == string(b) {
			if len(b) == len(m) {
				return true, true
			}
			prefix = true
		}
	}
	return false, prefix
}

// Why says why a run printed no primitive executions, from what its trace
// holds.
func (t *Trace) Why() string {
	switch {
	case t.Verbose == 0:
		return "the program printed no oneDNN verbose lines: it did not load oneDNN (libdnnl), did not create a primitive, or turned verbose output off (ONEDNN_VERBOSE=0 or dnnl_set_verbose(0)); a oneDNN older than 1.0 prints mkldnn_verbose lines, which rprof does not read"
	case t.Info.Version != "" && t.Primitives == 0 && t.Skipped == 0:
		return "oneDNN " + t.Info.Version + " printed its header but no primitive executions: the program executed no primitive"
	case t.Skipped > 0 && t.Primitives == 0:
		return "no verbose line parsed: the library's format is one rprof does not read (first: " + strings.TrimSpace(t.Examples[0]) + ")"
	}
	return ""
}
