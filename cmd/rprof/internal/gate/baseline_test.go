package gate

import (
	"errors"
	"reflect"
	"testing"

	"github.com/rprof/rprof/roofline"
)

func TestBaselinePicksTheLabelOrNamesTheLabelsThereAre(t *testing.T) {
	ps := []roofline.Point{{Label: "spin", Seconds: 1}, {Label: "triad", Seconds: 2}}
	p, err := Baseline(ps, "triad")
	if err != nil || p.Seconds != 2 {
		t.Fatalf("Baseline(triad) = %v, %v; want the triad point", p.Label, err)
	}
	_, err = Baseline(ps, "stream")
	var le *LabelError
	if !errors.As(err, &le) || le.Label != "stream" || !reflect.DeepEqual(le.Have, []string{"spin", "triad"}) {
		t.Fatalf("Baseline(stream) err = %#v; want a *LabelError naming spin and triad", err)
	}
	if got, want := err.Error(), `has no point labelled "stream" (it has "spin", "triad")`; got != want {
		t.Errorf("err = %q, want %q", got, want)
	}
}
