package dnnrun

import "github.com/rprof/rprof/internal/launch"

// targetPath is the absolute path of the executable a command names, as
// launch finds it: a missing or non-executable one is a *launch.Error.
func targetPath(name string) (string, error) { return launch.ResolveTarget(name, "") }
