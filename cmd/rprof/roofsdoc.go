package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/rprof/rprof/roofline"
)

// roofsDoc is the roofs document a command places points under.
type roofsDoc struct {
	// roofs is nil when there is none.
	roofs *roofline.Roofs
	// path names the document read, "" when none.
	path string
	// missing is the default path when it was looked for and is absent.
	missing string
}

// defaultRoofsPath is where `rprof roofs` writes and `rprof run` looks by
// default: $XDG_CACHE_HOME/rprof/roofs.json (or the OS equivalent).
func defaultRoofsPath() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("find cache directory: %w", err)
	}
	return filepath.Join(dir, "rprof", "roofs.json"), nil
}

// roofsInput is the roofs document a command reads: flag, else the
// default one ("" when there is no cache directory).
func roofsInput(flag string) string {
	if flag != "" {
		return flag
	}
	def, _ := defaultRoofsPath()
	return def
}

// loadRoofs finds and reads the roofs document: the one given with
// --roofs, else the one 'rprof roofs' writes by default when it exists.
// Every command finds roofs here, and reads them with readRoofs.
func loadRoofs(flag string) (roofsDoc, error) {
	d := roofsDoc{path: flag}
	if flag == "" {
		def, err := defaultRoofsPath()
		if err != nil {
			return d, nil // no cache directory: no default roofs
		}
		if _, err := os.Stat(def); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				d.missing = def
				return d, nil
			}
			return d, fmt.Errorf("read roofs: %w", err)
		}
		d.path = def
	}
	r, err := readRoofs(d.path)
	if err != nil {
		return roofsDoc{}, fmt.Errorf("read roofs: %w", err)
	}
	d.roofs = r
	return d, nil
}

// readRoofs reads the roofs document at path.
func readRoofs(path string) (*roofline.Roofs, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return roofline.DecodeRoofs(f, path)
}

// readPoints reads the point or point set at path.
func readPoints(path string) ([]roofline.Point, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return roofline.DecodePoints(f, path)
}
