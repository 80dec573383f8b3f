package machine

// cpuid executes the CPUID instruction (cpuid_amd64.s).
func cpuid(leaf, subleaf uint32) (eax, ebx, ecx, edx uint32)

var hostCPUID CPUIDFunc = cpuid
