package render

import (
	"fmt"
	"io"
	"sync"
)

// Progress shows the current step on one line, only on a terminal.
type Progress struct {
	mu    sync.Mutex // Show and Say come from different goroutines
	w     io.Writer
	on    bool
	shown bool
}

// NewProgress shows steps on w when on (w is a terminal), else only
// the lines said.
func NewProgress(w io.Writer, on bool) *Progress {
	return &Progress{w: w, on: on}
}

// Show shows step in place of the one shown.
func (p *Progress) Show(step string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.on {
		fmt.Fprintf(p.w, "\r\033[K%s", step)
		p.shown = true
	}
}

// Clear takes the step shown away.
func (p *Progress) Clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clearLocked()
}

func (p *Progress) clearLocked() {
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
		p.shown = false
	}
}

// Say prints a whole line, terminal or not, in place of the step shown.
func (p *Progress) Say(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clearLocked()
	fmt.Fprintln(p.w, line)
}
