package machine

import (
	"io/fs"
	"strings"

	"github.com/rprof/rprof/internal/kfs"
)

// Hypervisor names the hypervisor from DMI's sys_vendor or, when DMI is
// absent (as in many KVM guests), from the paravirtual clock sources the
// kernel offers; "" when it finds none.
func Hypervisor(sysfs fs.FS) string {
	if v, err := kfs.ReadString(sysfs, "class/dmi/id/sys_vendor"); err == nil {
		for _, known := range []string{"QEMU", "KVM", "VMware", "innotek", "Xen", "Parallels", "Red Hat"} {
			if strings.Contains(v, known) {
				return v
			}
		}
	}
	clocks, err := kfs.ReadString(sysfs, "devices/system/clocksource/clocksource0/available_clocksource")
	if err != nil {
		return ""
	}
	for _, c := range []struct{ clock, name string }{
		{"kvm-clock", "KVM"}, {"hyperv_clocksource", "Hyper-V"}, {"xen", "Xen"}, {"vmware", "VMware"},
	} {
		if strings.Contains(clocks, c.clock) {
			return c.name
		}
	}
	return ""
}
