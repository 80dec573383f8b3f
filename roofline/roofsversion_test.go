package roofline

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestReadRoofsUpgradesVersion1LevelSizesIntoEffectiveCaches(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want []CacheLevel
	}{
		{"declared sizes stay declared", `{"schema": "rprof.roofs/v1", "bandwidth": [
			{"level": "L1", "threads": 1, "gbytes_per_s": 400, "level_bytes": 49152, "level_source": "sysfs"},
			{"level": "L1", "threads": 1, "gbytes_per_s": 390, "level_bytes": 49152, "level_source": "sysfs"},
			{"level": "DRAM", "threads": 1, "gbytes_per_s": 40}]}`,
			[]CacheLevel{{Level: "L1", Threads: 1, Bytes: 49152, Source: "sysfs", DeclaredBytes: 49152, DeclaredSource: "sysfs"}}},
		{"a measured size has no declaration", `{"schema": "rprof.roofs/v1", "bandwidth": [
			{"level": "L3", "threads": 2, "gbytes_per_s": 200, "level_bytes": 190000000, "level_source": "measured"}]}`,
			[]CacheLevel{{Level: "L3", Threads: 2, Bytes: 190000000, Source: "measured"}}},
		{"no sizes, no caches", `{"schema": "rprof.roofs/v1", "bandwidth": [{"level": "DRAM", "threads": 1, "gbytes_per_s": 40}]}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "roofs.json")
			if err := os.WriteFile(path, []byte(tt.doc), 0o644); err != nil {
				t.Fatal(err)
			}
			r, err := readRoofs(path)
			if err != nil {
				t.Fatal(err)
			}
			if r.Schema != RoofsSchema {
				t.Errorf("schema %q, want %q", r.Schema, RoofsSchema)
			}
			if !reflect.DeepEqual(r.Caches, tt.want) {
				t.Errorf("caches %+v, want %+v", r.Caches, tt.want)
			}
		})
	}
}

func TestCacheLevelsAreOneScopesSmallestFirst(t *testing.T) {
	r := Roofs{Caches: []CacheLevel{
		{Level: "L3", Threads: 1, Bytes: 32 << 20}, {Level: "L1", Threads: 2, Bytes: 96 << 10},
		{Level: "L1", Threads: 1, Bytes: 48 << 10}, {Level: "L2", Threads: 1, Bytes: 1 << 20},
	}}
	var got []string
	for _, c := range r.CacheLevels(1) {
		got = append(got, c.Level)
	}
	if want := []string{"L1", "L2", "L3"}; !reflect.DeepEqual(got, want) {
		t.Errorf("CacheLevels(1) = %v, want %v", got, want)
	}
	if c := r.CacheLevels(4); c != nil {
		t.Errorf("CacheLevels(4) = %v, want none", c)
	}
}
