package pmu

import (
	"encoding/binary"
	"errors"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
)

// groupBytes lays out a group read as the kernel does: nr, enabled,
// running, then value/id pairs.
func groupBytes(enabled, running uint64, pairs ...uint64) []byte {
	words := append([]uint64{uint64(len(pairs) / 2), enabled, running}, pairs...)
	b := make([]byte, 8*len(words))
	for i, w := range words {
		binary.NativeEndian.PutUint64(b[8*i:], w)
	}
	return b
}

func TestParseGroupRead(t *testing.T) {
	ids := []uint64{7, 9, 11}
	tests := []struct {
		name    string
		buf     []byte
		want    []Count
		wantErr string
	}{
		{
			name: "values in id order",
			buf:  groupBytes(1000, 1000, 5, 7, 6, 9, 8, 11),
			want: []Count{{5, 1000, 1000}, {6, 1000, 1000}, {8, 1000, 1000}},
		},
		{
			name: "ids out of order are matched by id",
			buf:  groupBytes(1000, 1000, 8, 11, 5, 7, 6, 9),
			want: []Count{{5, 1000, 1000}, {6, 1000, 1000}, {8, 1000, 1000}},
		},
		{
			name: "multiplexed group keeps both times",
			buf:  groupBytes(2000, 500, 5, 7, 6, 9, 8, 11),
			want: []Count{{5, 2000, 500}, {6, 2000, 500}, {8, 2000, 500}},
		},
		{
			name: "group never scheduled",
			buf:  groupBytes(2000, 0, 0, 7, 0, 9, 0, 11),
			want: []Count{{0, 2000, 0}, {0, 2000, 0}, {0, 2000, 0}},
		},
		{name: "short header", buf: groupBytes(1, 1)[:16], wantErr: "short read of 16 bytes"},
		{name: "short body", buf: groupBytes(1, 1, 5, 7, 6, 9, 8, 11)[:60], wantErr: "short read of 60 bytes, want 72"},
		{name: "value count differs", buf: groupBytes(1, 1, 5, 7, 6, 9), wantErr: "2 values, want 3"},
		{name: "unknown id", buf: groupBytes(1, 1, 5, 7, 6, 9, 8, 12), wantErr: "unknown event id 12"},
		{name: "repeated id", buf: groupBytes(1, 1, 5, 7, 6, 7, 8, 11), wantErr: "event id 7 listed twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseGroupRead(tt.buf, ids)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestParseSingleReadRejectsShortRead(t *testing.T) {
	b := groupBytes(3, 4) // 3 words: value=0 (nr), 3, 4
	c, err := parseSingleRead(b)
	if err != nil || c != (Count{Raw: 0, Enabled: 3, Running: 4}) {
		t.Fatalf("parseSingleRead = %v, %v", c, err)
	}
	if _, err := parseSingleRead(b[:20]); err == nil {
		t.Fatal("a 20-byte read was accepted")
	}
}

func TestOpenTaskRejectsBadGroups(t *testing.T) {
	tests := []struct {
		name    string
		groups  [][]Event
		wantErr string
	}{
		{"empty group", [][]Event{{}}, "empty group"},
		{"two PMUs", [][]Event{{{Name: "task-clock", Attr: Attr{Type: 1}}, {Name: "r01c4", Attr: Attr{Type: 4}}}}, "differs from the group leader task-clock"},
		{"system-wide event", [][]Event{{{Name: "amd_df/x/", Attr: Attr{Type: 12}, CPUs: []int{0}}}}, "OpenSystemWide"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := OpenTask(0, tt.groups, TaskOptions{})
			if err == nil {
				c.Close()
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("err = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestOpenSystemWideRejectsEventWithoutCPUs(t *testing.T) {
	_, err := OpenSystemWide([]Event{{Name: "cpu-clock", Attr: Attr{Type: 1}}})
	var ee *EventError
	if !errors.As(err, &ee) || ee.Event != "cpu-clock" {
		t.Fatalf("err = %v, want an *EventError for cpu-clock", err)
	}
}

func TestReadParanoid(t *testing.T) {
	tests := []struct {
		name    string
		content string
		want    int
		wantErr string
	}{
		{"debian default", "2\n", 2, ""},
		{"negative", "-1\n", -1, ""},
		{"hardened", "4", 4, ""},
		{"garbage", "two\n", 0, `"two" is not a number`},
		{"missing", "", 0, "file does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			if tt.content != "" {
				fsys[paranoidFile] = &fstest.MapFile{Data: []byte(tt.content)}
			}
			got, err := ReadParanoid(fsys)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ReadParanoid = %d, %v; want %d", got, err, tt.want)
			}
		})
	}
}
