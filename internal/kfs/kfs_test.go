package kfs

import (
	"errors"
	"reflect"
	"testing"
)

func TestParseCPUList(t *testing.T) {
	tests := []struct {
		in   string
		want []int
		ok   bool
	}{
		{"0-3,8-11", []int{0, 1, 2, 3, 8, 9, 10, 11}, true},
		{"0\n", []int{0}, true},
		{"", nil, true},
		{"\n", nil, true},
		{"5,1-2,2", []int{1, 2, 5}, true},
		{"8191", []int{8191}, true},
		{"8192", nil, false},
		{"0-", nil, false},
		{"-1", nil, false},
		{"3-1", nil, false},
		{"a", nil, false},
		{"0,,1", nil, false},
		{"0-1-2", nil, false},
	}
	for _, tt := range tests {
		got, err := ParseCPUList(tt.in)
		if (err == nil) != tt.ok || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseCPUList(%q) = %v, %v; want %v, ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
		if err != nil && !errors.Is(err, ErrMalformed) {
			t.Errorf("ParseCPUList(%q) error %v does not match ErrMalformed", tt.in, err)
		}
		if tt.ok && len(got) > 0 {
			back, _ := ParseCPUList(FormatList(got))
			if !reflect.DeepEqual(back, got) {
				t.Errorf("FormatList(%v) = %q does not parse back", got, FormatList(got))
			}
		}
	}
}
