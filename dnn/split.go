package dnn

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
)

// Splitter separates oneDNN's verbose lines from a program's own output,
// which shares its stdout. Bytes of the program's lines go to Out as they
// arrive and unchanged (partial lines and binary data included); only a
// line that starts with a verbose marker is held back whole and handed to
// Line, without its newline. A line's first bytes are held only while they
// could still be the start of a marker.
type Splitter struct {
	Out  io.Writer
	Line func(line string)

	buf  []byte
	mode int // atStart, program or verbose
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
				s.buf = append(s.buf, p...)
				return n, nil
			}
			s.buf = append(s.buf, p[:i]...)
			s.Line(string(s.buf))
			s.buf, s.mode, p = s.buf[:0], atStart, p[i+1:]
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
				s.mode = verbose
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
		s.Line(string(s.buf))
		return nil
	}
	return s.out(s.buf)
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

// Capture copies r to out through a Splitter and returns the trace of the
// verbose lines. It reads until EOF; an error writing to out stops the
// passing through, not the reading, so the program is never blocked on a
// full pipe.
func Capture(r io.Reader, out io.Writer) (*Trace, error) {
	tr := &Trace{}
	s := &Splitter{Out: out, Line: tr.Add}
	br := bufio.NewReaderSize(r, 64<<10)
	buf := make([]byte, 64<<10)
	var outErr error
	for {
		n, err := br.Read(buf)
		if n > 0 {
			if _, werr := s.Write(buf[:n]); werr != nil {
				outErr = werr
				s.Out = io.Discard
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return tr, err
		}
	}
	if err := s.Close(); err != nil && outErr == nil {
		outErr = err
	}
	return tr, outErr
}

// Why says why a run printed no primitive executions, from what its trace
// holds.
func (t *Trace) Why() string {
	switch {
	case t.Verbose == 0:
		return "the program printed no oneDNN verbose lines: it did not load oneDNN (libdnnl), did not create a primitive, or turned verbose output off (ONEDNN_VERBOSE=0 or dnnl_set_verbose(0)); a oneDNN older than 1.0 prints mkldnn_verbose lines, which rprof does not read"
	case t.Info.Version != "" && len(t.Records) == 0 && t.Skipped == 0:
		return "oneDNN " + t.Info.Version + " printed its header but no primitive executions: the program executed no primitive"
	case t.Skipped > 0 && len(t.Records) == 0:
		return "no verbose line parsed: the library's format is one rprof does not read (first: " + strings.TrimSpace(t.Examples[0]) + ")"
	}
	return ""
}
