package gate

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/rprof/rprof/roofline"
)

// LabelError is a baseline without a point of the label gated.
type LabelError struct {
	Label string
	// Have are the baseline's labels.
	Have []string
}

func (e *LabelError) Error() string {
	var quoted []string
	for _, l := range e.Have {
		quoted = append(quoted, strconv.Quote(l))
	}
	return fmt.Sprintf("has no point labelled %q (it has %s)", e.Label, strings.Join(quoted, ", "))
}

// Baseline is the baseline point of label among ps, else a *LabelError.
func Baseline(ps []roofline.Point, label string) (roofline.Point, error) {
	var labels []string
	for _, p := range ps {
		if p.Label == label {
			return p, nil
		}
		labels = append(labels, p.Label)
	}
	return roofline.Point{}, &LabelError{Label: label, Have: labels}
}
