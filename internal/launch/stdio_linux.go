package launch

import (
	"fmt"
	"io"
	"os"
	"sync"
)

// stdio hands the target its streams: *os.File as is, other readers and
// writers through pipes copied by goroutines.
type stdio struct {
	child      [3]*os.File
	childEnds  []*os.File // the child's ends of pipes, closed once it started
	parentEnds []*os.File // rprof's ends, closed when the target is reaped
	copiers    sync.WaitGroup
	// writing is held by a copier for each write: the caller's stdout and
	// stderr may end in one buffer (a wrapping writer and the buffer
	// itself) that must not be written to at once.
	writing   sync.Mutex
	copyErrMu sync.Mutex
	copyErr   error
	devNull   *os.File
}

func (s *stdio) setup(spec Spec) error {
	if err := s.input(spec.Stdin); err != nil {
		return err
	}
	if err := s.output(1, spec.Stdout); err != nil {
		return err
	}
	if _, isFile := spec.Stderr.(*os.File); !isFile && spec.Stderr != nil && sameWriter(spec.Stdout, spec.Stderr) {
		// One pipe keeps the order in which the target wrote to
		// both (as os/exec does).
		s.child[2] = s.child[1]
		return nil
	}
	return s.output(2, spec.Stderr)
}

// sameWriter compares writers whose dynamic types may not be comparable.
func sameWriter(a, b io.Writer) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a == b
}

func (s *stdio) null() (*os.File, error) {
	if s.devNull == nil {
		f, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
		if err != nil {
			return nil, fmt.Errorf("launch: %w", err)
		}
		s.devNull = f
	}
	return s.devNull, nil
}

func (s *stdio) input(r io.Reader) error {
	switch r := r.(type) {
	case nil:
		f, err := s.null()
		s.child[0] = f
		return err
	case *os.File:
		s.child[0] = r
		return nil
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("launch: stdin pipe: %w", err)
	}
	s.child[0] = pr
	s.childEnds = append(s.childEnds, pr)
	s.parentEnds = append(s.parentEnds, pw)
	// Not waited for: a reader that never ends must not hold rprof once
	// the target is gone; closing pw ends the copy.
	go func() {
		io.Copy(pw, r)
		pw.Close()
	}()
	return nil
}

func (s *stdio) output(fd int, w io.Writer) error {
	switch w := w.(type) {
	case nil:
		f, err := s.null()
		s.child[fd] = f
		return err
	case *os.File:
		s.child[fd] = w
		return nil
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("launch: output pipe: %w", err)
	}
	s.child[fd] = pw
	s.childEnds = append(s.childEnds, pw)
	s.parentEnds = append(s.parentEnds, pr)
	s.copiers.Add(1)
	go func() {
		defer s.copiers.Done()
		if _, err := io.Copy(serialized{&s.writing, w}, pr); err != nil {
			s.copyErrMu.Lock()
			if s.copyErr == nil {
				s.copyErr = fmt.Errorf("launch: copy target output: %w", err)
			}
			s.copyErrMu.Unlock()
		}
	}()
	return nil
}

func (s *stdio) afterStart() {
	for _, f := range s.childEnds {
		f.Close()
	}
	s.childEnds = nil
	if s.devNull != nil {
		s.devNull.Close()
		s.devNull = nil
	}
}

// serialized writes to w holding mu.
type serialized struct {
	mu *sync.Mutex
	w  io.Writer
}

func (s serialized) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(b)
}

// wait waits for the target's output to be copied: until every holder of
// the pipes (the target and any children it left behind) closed them.
func (s *stdio) wait() error {
	s.copiers.Wait()
	return s.copyErr
}

// closeAll closes whatever is still open, on every path, and waits for
// the output copiers to stop: none writes to the caller's writers once Run
// returned, even when it returned early with an error.
func (s *stdio) closeAll() {
	s.afterStart()
	for _, f := range s.parentEnds {
		f.Close()
	}
	s.parentEnds = nil
	s.copiers.Wait()
}
