package main

import (
	"fmt"
	"runtime/debug"
	"strings"
)

// build is the build information: the main module's version, the Go
// version and the VCS settings by key; ok is false without it.
func build() (bi *debug.BuildInfo, settings map[string]string, ok bool) {
	bi, ok = debug.ReadBuildInfo()
	if !ok {
		return nil, nil, false
	}
	settings = map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	return bi, settings, true
}

// version is "rprof VERSION (REVISION[, modified], TIME) GOVERSION" from
// the build info: the module version for `go install module@version`,
// "(devel)" for a build from a checkout, whose VCS revision then says
// which commit it is.
func version() string {
	bi, settings, ok := build()
	if !ok {
		return "rprof (no build information)"
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

// rprofVersion names this build in a rank's point: the module version, or
// the VCS revision (with "+dirty" for a modified tree) of a development
// build.
func rprofVersion() string {
	bi, settings, ok := build()
	if !ok {
		return "unknown"
	}
	v, rev := bi.Main.Version, settings["vcs.revision"]
	if (v == "" || v == "(devel)") && rev != "" {
		if settings["vcs.modified"] == "true" {
			rev += "+dirty"
		}
		return rev
	}
	if v == "" {
		return "(devel)"
	}
	return v
}
