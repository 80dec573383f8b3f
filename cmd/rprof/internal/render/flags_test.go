package render

import (
	"bytes"
	"testing"
)

func TestWriteFlagTableAlignsWrapsAndSaysDefaults(t *testing.T) {
	tests := []struct {
		name string
		rows []FlagRow
		want string
	}{
		{"one letter, one dash; a switch without argument",
			[]FlagRow{{Name: "e", Arg: "EVENT", Usage: "also count EVENT"}, {Name: "quick", Usage: "fewer roofs"}},
			"  -e EVENT  also count EVENT\n  --quick   fewer roofs\n"},
		{"a default that is not the zero value is said",
			[]FlagRow{{Name: "alpha", Arg: "P", Usage: "significance level", Default: "0.05"}},
			"  --alpha P  significance level (default 0.05)\n"},
		{"a long usage wraps under its column",
			[]FlagRow{{Name: "x", Usage: "aaaa bbbb cccc dddd eeee ffff gggg hhhh iiii jjjj kkkk llll mmmm nnnn oooo pppp"}},
			"  -x  aaaa bbbb cccc dddd eeee ffff gggg hhhh iiii jjjj kkkk llll mmmm nnnn\n      oooo pppp\n"},
		{"a name wider than the column puts its usage on the next line",
			[]FlagRow{{Name: "max-traffic-growth", Arg: "PCT", Usage: "largest growth"}, {Name: "ci", Arg: "PCT", Usage: "interval"}},
			"  --max-traffic-growth PCT\n            largest growth\n  --ci PCT  interval\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteFlagTable(&b, tt.rows); err != nil {
				t.Fatal(err)
			}
			if b.String() != tt.want {
				t.Errorf("got\n%q\nwant\n%q", b.String(), tt.want)
			}
		})
	}
}
