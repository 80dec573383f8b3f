package emulate

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
)

// The plugin built for each plugin API version (plugin/build.sh).
//
//go:embed plugin/rprof-qemu-v1.so
var pluginV1 []byte

// support is one QEMU release line rprof's plugin is built and tested for.
type support struct {
	major, minor int
	api          int    // the plugin API version
	plugin       []byte // the library built against it
}

// supported lists the QEMU releases whose plugin API rprof supports. A
// newer API is one more row and one more plugin build.
var supported = []support{
	{major: 7, minor: 2, api: 1, plugin: pluginV1},
}

// Supported names the supported QEMU releases for messages.
func Supported() string {
	var s []string
	for _, v := range supported {
		s = append(s, fmt.Sprintf("%d.%d (plugin API %d)", v.major, v.minor, v.api))
	}
	return "QEMU " + strings.Join(s, ", ")
}

// QEMUBinary is the qemu-user emulator rprof runs (Debian package
// qemu-user).
const QEMUBinary = "qemu-x86_64"

// ErrNoQEMU: qemu-x86_64 is not installed.
var ErrNoQEMU = errors.New("qemu-x86_64 not found")

// UnsupportedQEMUError is a QEMU whose plugin API rprof does not support.
type UnsupportedQEMUError struct {
	Path    string
	Version string // as the binary reports it, "" when unreadable
}

func (e *UnsupportedQEMUError) Error() string {
	v := e.Version
	if v == "" {
		v = "an unknown version"
	}
	return fmt.Sprintf("%s is %s: rprof supports %s", e.Path, v, Supported())
}

// QEMU is a supported emulator found on this machine.
type QEMU struct {
	Path      string
	Version   string // e.g. "7.2.22"
	PluginAPI int
	plugin    []byte
}

var versionRE = regexp.MustCompile(`version (\d+)\.(\d+)(\.\d+)?`)

// FindQEMU looks up qemu-x86_64 in PATH and checks its version. Errors:
// ErrNoQEMU, *UnsupportedQEMUError.
func FindQEMU(ctx context.Context) (QEMU, error) {
	path, err := exec.LookPath(QEMUBinary)
	if err != nil {
		return QEMU{}, fmt.Errorf("%w: %v", ErrNoQEMU, err)
	}
	out, err := exec.CommandContext(ctx, path, "--version").Output()
	if err != nil {
		return QEMU{}, &UnsupportedQEMUError{Path: path}
	}
	return Identify(path, string(out))
}

// Identify matches the first line of `qemu-x86_64 --version` (versionText)
// of the emulator at path against the supported releases. Errors:
// *UnsupportedQEMUError.
func Identify(path, versionText string) (QEMU, error) {
	first, _, _ := strings.Cut(versionText, "\n")
	m := versionRE.FindStringSubmatch(first)
	if m == nil {
		return QEMU{}, &UnsupportedQEMUError{Path: path}
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	version := m[1] + "." + m[2] + m[3]
	for _, s := range supported {
		if s.major == major && s.minor == minor {
			return QEMU{Path: path, Version: version, PluginAPI: s.api, plugin: s.plugin}, nil
		}
	}
	return QEMU{}, &UnsupportedQEMUError{Path: path, Version: "QEMU " + version}
}
