package kernels

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"unsafe"
)

func TestLargeAllocAsksForHugePages(t *testing.T) {
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage"); err != nil {
		t.Skipf("no transparent huge pages on this kernel: %v", err)
	}
	x := Alloc(4 * hugeBytes / 8)
	flags, err := vmFlags(uintptr(unsafe.Pointer(&x[0])))
	if err != nil {
		t.Skipf("cannot read this process's mappings: %v", err)
	}
	if !slices.Contains(flags, "hg") {
		t.Errorf("the mapping under a %d-byte Alloc has VmFlags %v, want hg (MADV_HUGEPAGE)", len(x)*8, flags)
	}
}

// vmFlags are the VmFlags of the mapping of this process holding addr.
func vmFlags(addr uintptr) ([]string, error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		switch {
		case len(fields) == 0:
		case !strings.HasSuffix(fields[0], ":"): // a mapping's header: lo-hi perms ...
			var lo, hi uintptr
			_, err := fmt.Sscanf(fields[0], "%x-%x", &lo, &hi)
			in = err == nil && lo <= addr && addr < hi
		case in && fields[0] == "VmFlags:":
			return fields[1:], nil
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("no mapping holds %#x", addr)
}
