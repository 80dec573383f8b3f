package main

import (
	"fmt"
	"runtime/debug"
	"strings"
)

// version is "rprof VERSION (REVISION[, modified], TIME) GOVERSION" from
// the build info: the module version for `go install module@version`,
// "(devel)" for a build from a checkout, whose VCS revision then says
// which commit it is.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "rprof (no build information)"
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	var vcs []string
	if rev := settings["vcs.revision"]; rev != "" {
		vcs = append(vcs, rev)
		if settings["vcs.modified"] == "true" {
			vcs = append(vcs, "modified")
		}
		if t := settings["vcs.time"]; t != "" {
			vcs = append(vcs, t)
		}
	} else {
		vcs = append(vcs, "no VCS revision: built outside a checkout or with -buildvcs=false")
	}
	return fmt.Sprintf("rprof %s (%s) %s", bi.Main.Version, strings.Join(vcs, ", "), bi.GoVersion)
}

// rprofVersion names this build: the module version, or the VCS revision
// (with "+dirty" for a modified tree) of a development build.
func rprofVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if (v == "" || v == "(devel)") && rev != "" {
		return rev + dirty
	}
	if v == "" {
		return "(devel)"
	}
	return v
}
