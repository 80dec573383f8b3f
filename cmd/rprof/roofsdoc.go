package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

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

// loadRoofs finds and reads the roofs document: the one given with
// --roofs, else the one 'rprof roofs' writes by default when it exists.
// Every command finds and reads roofs here, once.
// roofsInput is the roofs document a command reads: flag, else the
// default one ("" when there is no cache directory).
func roofsInput(flag string) string {
	if flag != "" {
		return flag
	}
	def, _ := roofline.DefaultRoofsPath()
	return def
}

func loadRoofs(flag string) (roofsDoc, error) {
	d := roofsDoc{path: flag}
	if flag == "" {
		def, err := roofline.DefaultRoofsPath()
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
	r, err := roofline.ReadRoofs(d.path)
	if err != nil {
		return roofsDoc{}, fmt.Errorf("read roofs: %w", err)
	}
	d.roofs = r
	return d, nil
}
