//go:build !linux

package measure

import "os"

// Launch is the launcher's entry point; there is no launcher off Linux.
func Launch(args []string) { os.Exit(125) }
