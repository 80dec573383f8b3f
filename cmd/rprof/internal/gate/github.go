package gate

import (
	"fmt"
	"io"
	"strings"
)

// WriteAnnotations writes GitHub Actions workflow commands: an error for a
// regression, a warning when the gate could not decide, a notice for a
// pass, and a notice for each check that could not be made.
func WriteAnnotations(w io.Writer, v *Verdict) error {
	ew := &errWriter{w: w}
	level := "notice"
	switch v.Outcome {
	case Regression:
		level = "error"
	case Undecided:
		level = "warning"
	}
	fmt.Fprintf(ew, "::%s title=%s::%s\n", level, ghProperty("rprof gate "+v.Label), ghData(v.Reason))
	for _, c := range v.Checks {
		if c.Outcome == Skipped {
			fmt.Fprintf(ew, "::notice title=%s::%s\n", ghProperty("rprof gate "+v.Label+": "+c.Name), ghData(c.Detail))
		}
	}
	return ew.err
}

// WriteErrorAnnotation writes one error workflow command, for failures
// that leave no verdict (no baseline, a command that could not start).
func WriteErrorAnnotation(w io.Writer, title, msg string) error {
	_, err := fmt.Fprintf(w, "::error title=%s::%s\n", ghProperty(title), ghData(msg))
	return err
}

// ghData escapes a workflow command's message.
func ghData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// ghProperty escapes a workflow command's property value.
func ghProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}
