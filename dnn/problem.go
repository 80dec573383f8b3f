package dnn

import (
	"fmt"
	"strconv"
	"strings"
)

// Descriptor is a benchdnn problem descriptor of the named-field form
// ("g2mb2_ic64oc64_ih56oh56kh3sh1dh0ph1_iw56ow56kw3sw1dw0pw1",
// "mb2ic16_ih28oh14kh3sh2dh0ph1_iw28ow14kw3sw2dw0pw1", "mb32ic512oc256",
// "mb2ic32ih14iw14"): each field a lowercase name and a number, the
// underscores only for reading.
type Descriptor map[string]float64

// ParseDescriptor parses the named-field form. A trailing name in quotes
// (benchdnn's n"...") is ignored.
func ParseDescriptor(s string) (Descriptor, error) {
	if i := strings.Index(s, "n\""); i >= 0 {
		s = s[:i]
	}
	d := Descriptor{}
	i := 0
	for i < len(s) {
		if s[i] == '_' {
			i++
			continue
		}
		j := i
		for j < len(s) && s[j] >= 'a' && s[j] <= 'z' {
			j++
		}
		k := j
		for k < len(s) && (s[k] >= '0' && s[k] <= '9' || s[k] == '.' || s[k] == '-') {
			k++
		}
		if j == i || k == j {
			return nil, fmt.Errorf("%w: problem %q: expected name and number at %q", ErrMalformed, s, s[i:])
		}
		v, err := strconv.ParseFloat(s[j:k], 64)
		if err != nil {
			return nil, fmt.Errorf("%w: problem %q: %v", ErrMalformed, s, err)
		}
		name := s[i:j]
		if _, dup := d[name]; dup {
			return nil, fmt.Errorf("%w: problem %q: %s given twice", ErrMalformed, s, name)
		}
		d[name] = v
		i = k
	}
	if len(d) == 0 {
		return nil, fmt.Errorf("%w: empty problem", ErrMalformed)
	}
	return d, nil
}

// Has reports whether the descriptor names every field.
func (d Descriptor) Has(names ...string) bool {
	for _, n := range names {
		if _, ok := d[n]; !ok {
			return false
		}
	}
	return true
}

// Get returns the field or def when it is absent.
func (d Descriptor) Get(name string, def float64) float64 {
	if v, ok := d[name]; ok {
		return v
	}
	return def
}

// Dims parses the dimension-list form "2x64x112x112"; several tensors are
// separated by ':' ("128x1024:1024x1024:128x1024").
func Dims(s string) ([][]int64, error) {
	var out [][]int64
	for _, part := range strings.Split(s, ":") {
		var dims []int64
		for _, f := range strings.Split(part, "x") {
			v, err := strconv.ParseInt(f, 10, 64)
			if err != nil || v < 0 {
				return nil, fmt.Errorf("%w: dimensions %q: %q is not a size", ErrMalformed, s, f)
			}
			dims = append(dims, v)
		}
		out = append(out, dims)
	}
	return out, nil
}

// spatial lists the spatial axes present in a descriptor, outermost first:
// "d", "h", "w" for 3D, "h", "w" for 2D, "w" for 1D. A descriptor that names
// only h (benchdnn's square shorthand) also has w.
func (d Descriptor) spatial(prefix string) []string {
	var axes []string
	for _, a := range []string{"d", "h", "w"} {
		if d.Has(prefix + a) {
			axes = append(axes, a)
		}
	}
	if len(axes) > 0 && axes[len(axes)-1] != "w" {
		axes = append(axes, "w")
	}
	return axes
}

// size is the field for axis a of kind prefix ("i", "o", "k", "s", "d",
// "p"), falling back to the h field (square shorthand) and then to def.
func (d Descriptor) size(prefix, a string, def float64) float64 {
	if v, ok := d[prefix+a]; ok {
		return v
	}
	if v, ok := d[prefix+"h"]; ok && a == "w" {
		return v
	}
	return def
}
