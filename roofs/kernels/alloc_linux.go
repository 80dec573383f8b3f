package kernels

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// adviseHugePages asks for transparent huge pages under x, which must not
// have been touched yet. It is advice: a kernel without THP, or with THP
// off, keeps 4 KiB pages, and the slice works the same.
func adviseHugePages(x []float64) {
	if len(x) == 0 {
		return
	}
	_ = unix.Madvise(unsafe.Slice((*byte)(unsafe.Pointer(&x[0])), len(x)*8), unix.MADV_HUGEPAGE)
}
