package emulate

import (
	"context"
	"debug/elf"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
)

// The plugin built for each plugin API version (plugin/build.sh).
//
//go:embed plugin/rprof-qemu-v1.so
var pluginV1 []byte

//go:embed plugin/rprof-qemu-v2.so
var pluginV2 []byte

// support is a range of QEMU releases that load one build of rprof's
// plugin: those from first (major, minor) up to, not including, the next
// row's first.
type support struct {
	major, minor int
	api          int    // the plugin API version the build declares
	plugin       []byte // the library built against it
}

// supported lists, oldest first, the QEMU release lines by the plugin API
// version they load. QEMU 6.0 introduced plugin API versions (1); 9.0
// raised the minimum it loads to 2 and the v1 API's functions changed.
var supported = []support{
	{major: 6, minor: 0, api: 1, plugin: pluginV1},
	{major: 9, minor: 0, api: 2, plugin: pluginV2},
}

// Supported names the supported QEMU releases for messages.
func Supported() string {
	var s []string
	for i, v := range supported {
		r := fmt.Sprintf("%d.%d and later", v.major, v.minor)
		if i+1 < len(supported) {
			r = fmt.Sprintf("%d.%d to %d.x", v.major, v.minor, supported[i+1].major-1)
		}
		s = append(s, fmt.Sprintf("%s (plugin API %d)", r, v.api))
	}
	return "QEMU " + strings.Join(s, ", ")
}

// QEMUBinary is the qemu-user emulator rprof runs (Debian package
// qemu-user).
const QEMUBinary = "qemu-x86_64"

// QEMUEnv names the environment variable that names the emulator's file
// (FindQEMU).
const QEMUEnv = "RPROF_QEMU"

// ErrNoQEMU: qemu-x86_64 is not installed.
var ErrNoQEMU = errors.New("qemu-x86_64 not found")

// Why a QEMU cannot run rprof's plugin (UnsupportedQEMUError.Reason).
const (
	// QEMUUnknownVersion: the binary did not say its version.
	QEMUUnknownVersion = "unknown version"
	// QEMUTooOld: before 6.0, QEMU's plugins had no API version.
	QEMUTooOld = "too old"
	// QEMUStatic: a statically linked QEMU (qemu-user-static, Debian
	// 13's qemu-user) cannot load plugins.
	QEMUStatic = "static"
	// QEMUNoPlugins: QEMU was built without plugin support.
	QEMUNoPlugins = "no plugins"
)

// UnsupportedQEMUError is a QEMU that cannot run rprof's plugin, and why.
type UnsupportedQEMUError struct {
	Path    string
	Version string // as the binary reports it, "" when unreadable
	Reason  string // one of the QEMU* reasons above
}

func (e *UnsupportedQEMUError) Error() string {
	v := e.Version
	if v == "" {
		v = "of an unknown version"
	}
	switch e.Reason {
	case QEMUStatic:
		return fmt.Sprintf("%s is a statically linked QEMU, which cannot load plugins", e.Path)
	case QEMUNoPlugins:
		return fmt.Sprintf("%s (%s) was built without plugin support", e.Path, v)
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

// FindQEMU looks for the emulator: the file $RPROF_QEMU names, else
// qemu-x86_64 in PATH; see FindQEMUAt.
func FindQEMU(ctx context.Context) (QEMU, error) {
	return FindQEMUAt(ctx, "")
}

// FindQEMUAt checks the emulator at path ("": FindQEMU's choice): that
// it is dynamically linked, built with plugins, and of a version whose
// plugin API rprof has a build for. Errors: ErrNoQEMU,
// *UnsupportedQEMUError.
func FindQEMUAt(ctx context.Context, path string) (QEMU, error) {
	if path == "" {
		path = os.Getenv(QEMUEnv)
	}
	if path == "" {
		path = QEMUBinary
	}
	found, err := exec.LookPath(path)
	if err != nil {
		return QEMU{}, fmt.Errorf("%w: %v", ErrNoQEMU, err)
	}
	if static(found) {
		return QEMU{}, &UnsupportedQEMUError{Path: found, Reason: QEMUStatic}
	}
	out, err := exec.CommandContext(ctx, found, "--version").Output()
	if err != nil {
		return QEMU{}, &UnsupportedQEMUError{Path: found, Reason: QEMUUnknownVersion}
	}
	q, err := Identify(found, string(out))
	if err != nil {
		return q, err
	}
	// -h lists -plugin only in a build with plugin support.
	help, _ := exec.CommandContext(ctx, found, "-h").Output()
	if !strings.Contains(string(help), "-plugin") {
		return QEMU{}, &UnsupportedQEMUError{Path: found, Version: "QEMU " + q.Version, Reason: QEMUNoPlugins}
	}
	return q, nil
}

// static reports whether the ELF file at path has no program interpreter
// (a static executable, which cannot dlopen a plugin).
func static(path string) bool {
	f, err := elf.Open(path)
	if err != nil {
		return false // not ELF: running it will say what it is
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return false
		}
	}
	return true
}

// CPUHelp is what `qemu-x86_64 -cpu help` prints: the CPU models this
// QEMU knows (see CPUModels).
func (q QEMU) CPUHelp(ctx context.Context) (string, error) {
	// QEMU 7.2 exits 1 after printing the list.
	out, err := exec.CommandContext(ctx, q.Path, "-cpu", "help").Output()
	if len(CPUModels(string(out))) == 0 {
		return "", fmt.Errorf("emulate: %s -cpu help listed no x86 model: %v", q.Path, err)
	}
	return string(out), nil
}

var versionRE = regexp.MustCompile(`version (\d+)\.(\d+)(\.\d+)?`)

// Identify matches the first line of `qemu-x86_64 --version` (versionText)
// of the emulator at path against the supported releases. Errors:
// *UnsupportedQEMUError.
func Identify(path, versionText string) (QEMU, error) {
	first, _, _ := strings.Cut(versionText, "\n")
	m := versionRE.FindStringSubmatch(first)
	if m == nil {
		return QEMU{}, &UnsupportedQEMUError{Path: path, Reason: QEMUUnknownVersion}
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	version := m[1] + "." + m[2] + m[3]
	for i := len(supported) - 1; i >= 0; i-- {
		s := supported[i]
		if major > s.major || major == s.major && minor >= s.minor {
			return QEMU{Path: path, Version: version, PluginAPI: s.api, plugin: s.plugin}, nil
		}
	}
	return QEMU{}, &UnsupportedQEMUError{Path: path, Version: "QEMU " + version, Reason: QEMUTooOld}
}
