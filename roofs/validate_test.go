package roofs

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"
)

func TestValidateRefusesEachBadOptionNamingItsFields(t *testing.T) {
	negative, none := -time.Second, time.Duration(0)
	tests := []struct {
		name   string
		o      Options
		fields []string // nil: valid
	}{
		{"zero value", Options{}, nil},
		{"no DGEMM budget", Options{DGEMMBudget: &none}, nil},
		{"oneDNN in worker processes", Options{DNN: []string{"ip"}, Invoker: Subprocess{}}, nil},
		{"a megabyte sweep", Options{MaxMemory: 1 << 20}, nil},
		{"unknown method", Options{Method: "mode"}, []string{"Method"}},
		{"unknown DGEMM space", Options{DGEMMSpace: "huge"}, []string{"DGEMMSpace"}},
		{"negative fixed", Options{Fixed: -3}, []string{"Fixed"}},
		{"negative invocations", Options{Invocations: -1}, []string{"Invocations"}},
		{"fixed and quick", Options{Fixed: 5, Quick: true}, []string{"Fixed", "Quick"}},
		{"negative DGEMM budget", Options{DGEMMBudget: &negative}, []string{"DGEMMBudget"}},
		{"zero threads", Options{Threads: []int{1, 0}}, []string{"Threads"}},
		{"a sweep under a megabyte", Options{MaxMemory: 64 << 10}, []string{"MaxMemory"}},
		{"a negative sweep limit", Options{MaxMemory: -1}, []string{"MaxMemory"}},
		{"a BLAS that does not load", Options{BLAS: "/nonexistent/libopenblas.so.0"}, []string{"BLAS"}},
		{"oneDNN in process", Options{DNN: []string{"ip"}, Invoker: InProcess{}}, []string{"DNN", "Invoker"}},
		{"oneDNN with the default invoker", Options{DNN: []string{"ip"}}, []string{"DNN", "Invoker"}},
		{"unknown oneDNN problem", Options{DNN: []string{"ip", "conv9x9"}, Invoker: Subprocess{}}, []string{"DNN"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.o.Validate()
			if tt.fields == nil {
				if err != nil {
					t.Errorf("refused: %v", err)
				}
				return
			}
			var oe *OptionError
			if !errors.Is(err, ErrInvalidOptions) || !errors.As(err, &oe) || !slices.Equal(oe.Fields, tt.fields) {
				t.Errorf("error %v, want an %T matching ErrInvalidOptions naming %v", err, oe, tt.fields)
			}
		})
	}
}

func TestMeasureRefusesInvalidOptionsBeforeMeasuring(t *testing.T) {
	var steps []string
	_, err := Measure(context.Background(), Options{Fixed: 5, Quick: true, Progress: func(s string) { steps = append(steps, s) }})
	if !errors.Is(err, ErrInvalidOptions) || len(steps) > 0 {
		t.Errorf("error %v after steps %q, want ErrInvalidOptions before any", err, steps)
	}
}
