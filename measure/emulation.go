package measure

import (
	"context"

	"github.com/rprof/rprof/machine"
	"github.com/rprof/rprof/measure/emulate"
)

// The emulate backend's vocabulary for Run's callers: its cache model, the
// QEMU probe and its typed errors, so that a caller names the backend only
// through Config.

// CacheModel is the hierarchy the emulate backend simulates
// (Config.Counting.Emulator).
type CacheModel = emulate.CacheModel

// ParseCacheModel reads a cache model: "SIZE/WAYS,...[,line=B]" from L1
// down, or "none".
func ParseCacheModel(s string) (CacheModel, error) { return emulate.ParseCacheModel(s) }

// HostCacheModel is the model of h's caches (nil: this machine's), the
// emulate backend's default.
func HostCacheModel(h *machine.Host) CacheModel { return emulate.HostCacheModel(h) }

// UnsupportedQEMUError: the QEMU found cannot run the emulate backend's
// plugin; Reason is QEMUStatic, QEMUNoPlugins or a version outside
// SupportedQEMU.
type UnsupportedQEMUError = emulate.UnsupportedQEMUError

// Reasons of an UnsupportedQEMUError.
const (
	QEMUStatic    = emulate.QEMUStatic
	QEMUNoPlugins = emulate.QEMUNoPlugins
)

// ErrNoQEMU: the emulate backend found no qemu-x86_64.
var ErrNoQEMU = emulate.ErrNoQEMU

// QEMUEnv names the environment variable that names the QEMU binary.
const QEMUEnv = emulate.QEMUEnv

// SupportedQEMU lists the QEMU versions the emulate backend runs under.
func SupportedQEMU() string { return emulate.Supported() }

// CheckQEMU says whether the emulate backend can run here with the QEMU it
// would find: nil, ErrNoQEMU or an *UnsupportedQEMUError.
func CheckQEMU(ctx context.Context) error {
	_, err := emulate.FindQEMU(ctx)
	return err
}
