package output

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ErrSameFile is wrapped by Distinct's errors: an output names an input.
var ErrSameFile = errors.New("is also an input")

// SameFileError says which output names which input.
type SameFileError struct {
	Output, Input string
}

func (e *SameFileError) Error() string {
	if e.Output == e.Input {
		return fmt.Sprintf("output %s %v: writing it would destroy it", e.Output, ErrSameFile)
	}
	return fmt.Sprintf("output %s %v (%s): writing it would destroy it", e.Output, ErrSameFile, e.Input)
}

func (e *SameFileError) Unwrap() error { return ErrSameFile }

// Distinct refuses an output that names one of the inputs: the same file
// (os.SameFile, through links and hard links) where both exist, else the
// same cleaned absolute path, links resolved as far as they exist. "" and
// "-" (standard streams) are neither; devices, FIFOs and sockets may be
// both (writing them destroys nothing).
func Distinct(outputs, inputs []string) error {
	for _, out := range outputs {
		if out == "" || out == Stdout {
			continue
		}
		ost, oerr := os.Stat(out)
		if oerr == nil && !ost.Mode().IsRegular() {
			continue
		}
		for _, in := range inputs {
			if in == "" || in == Stdout {
				continue
			}
			ist, ierr := os.Stat(in)
			same := oerr == nil && ierr == nil && os.SameFile(ost, ist)
			if oerr != nil || ierr != nil {
				same = lexical(out) == lexical(in)
			}
			if same {
				return &SameFileError{Output: out, Input: in}
			}
		}
	}
	return nil
}

// lexical is path made absolute and clean, its directory's links resolved
// where it exists.
func lexical(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		return filepath.Join(dir, filepath.Base(abs))
	}
	return abs
}
