package regions

import (
	"fmt"
	"os"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/features"
)

// Supported says whether regions can be probed here: nil, or an error
// matching ErrNotSupported or ErrPermission that says what is missing.
func Supported() error {
	if !regsKnown {
		return fmt.Errorf("%w: no register layout for this architecture", ErrNotSupported)
	}
	if _, err := os.Stat("/sys/bus/event_source/devices/uprobe"); err != nil {
		return fmt.Errorf("%w: the kernel has no uprobe PMU (CONFIG_UPROBE_EVENTS)", ErrNotSupported)
	}
	if err := features.HaveProgramType(ebpf.Kprobe); err != nil {
		return loadError("load an eBPF kprobe program", err)
	}
	for _, fn := range []asm.BuiltinFunc{asm.FnGetAttachCookie, asm.FnRingbufOutput, asm.FnPerfEventReadValue} {
		if err := features.HaveProgramHelper(ebpf.Kprobe, fn); err != nil {
			return loadError(fmt.Sprintf("use the eBPF helper %s", fn), err)
		}
	}
	return nil
}
