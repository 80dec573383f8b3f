//go:build !linux

package cluster

import (
	"context"
	"time"
)

// Session is unavailable off Linux: Join returns ErrUnsupported.
type Session struct{ Patience time.Duration }

// Join returns ErrUnsupported.
func Join(dir string, id Identity) (*Session, error) {
	return nil, &LockDirError{Dir: dir, Err: ErrUnsupported}
}

func (s *Session) Elect(context.Context) (bool, error) { return false, ErrUnsupported }
func (s *Session) Started() error                      { return ErrUnsupported }
func (s *Session) Ended(context.Context) error         { return ErrUnsupported }
func (s *Session) Owner() bool                         { return false }
func (s *Session) Window() (start, end time.Time)      { return time.Time{}, time.Time{} }
func (s *Session) Shared() []string                    { return nil }
func (s *Session) Close() error                        { return nil }

// HydraProxy returns ErrUnsupported.
func HydraProxy() (int, uint64, error) { return 0, 0, ErrUnsupported }
