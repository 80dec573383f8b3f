//go:build !amd64

package machine

// hostCPUID is nil: only x86 has CPUID.
var hostCPUID CPUIDFunc
