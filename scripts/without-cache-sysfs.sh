#!/bin/sh
# without-cache-sysfs.sh runs a command as on a host whose sysfs has no
# cache tree (Firecracker guests, some containers): in a private mount
# namespace, an empty directory is bind-mounted over every
# /sys/devices/system/cpu/cpuN/cache, so rprof must find its cache sizes
# from CPUID or its own sweep. The rest of the machine is untouched, and
# the mounts vanish with the namespace when the command ends.
#
#	scripts/without-cache-sysfs.sh go run ./cmd/rprof roofs --quick
#	scripts/without-cache-sysfs.sh ./scripts/test.sh
#
# NO_CPUFREQ=1 hides cpufreq too (cpu/cpufreq and cpuN/cpufreq), as on most
# VMs. Needs root (unshare -m) and util-linux's unshare.
set -eu

if [ $# -eq 0 ]; then
	echo "usage: $0 COMMAND [ARG...]" >&2
	exit 2
fi
if [ "${RPROF_PRIVATE_SYSFS:-}" != 1 ]; then
	command -v unshare >/dev/null || { echo "$0: unshare not found (util-linux)" >&2; exit 1; }
	RPROF_PRIVATE_SYSFS=1 exec unshare --mount --propagation private "$0" "$@"
fi

empty=$(mktemp -d)
hide() {
	for d in "$@"; do
		[ -d "$d" ] && mount --bind "$empty" "$d"
	done
	return 0
}
hide /sys/devices/system/cpu/cpu[0-9]*/cache
if [ "${NO_CPUFREQ:-0}" = 1 ]; then
	hide /sys/devices/system/cpu/cpufreq /sys/devices/system/cpu/cpu[0-9]*/cpufreq
fi
status=0
"$@" || status=$?
# Only this namespace sees the mounts; undo them so the directory can go.
umount -l /sys/devices/system/cpu/cpu[0-9]*/cache 2>/dev/null || true
[ "${NO_CPUFREQ:-0}" = 1 ] && { umount -l /sys/devices/system/cpu/cpufreq /sys/devices/system/cpu/cpu[0-9]*/cpufreq 2>/dev/null || true; }
rmdir "$empty" 2>/dev/null || true
exit "$status"
