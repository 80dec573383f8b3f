#!/bin/sh
# other-host.sh runs a command as on a host of the other x86 vendor with no
# sysfs cache tree: in a private mount namespace, /proc/cpuinfo shows one
# of rprof's fake machines of the other vendor (an AMD host sees the Intel
# KVM guest whose model 0xA7 its AMX flags contradict,
# pmu/testdata/machines/vm-intel-amx; an Intel host sees an EPYC 9654,
# pmu/testdata/machines/zen4), one processor block per online CPU, and
# scripts/without-cache-sysfs.sh hides every cpuN/cache. A test that passes
# here and on the plain host depends on neither host's name, model or
# sizes. CPUID cannot be changed this way: code executing it still sees
# the real CPU. CI runs the test suite under it (.ci/run).
#
#	scripts/other-host.sh go test -count=1 ./...
#	scripts/other-host.sh go run ./cmd/rprof doctor
#
# Needs root (unshare -m) and util-linux's unshare.
set -eu

if [ $# -eq 0 ]; then
	echo "usage: $0 COMMAND [ARG...]" >&2
	exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
if [ "${RPROF_OTHER_HOST:-}" != 1 ]; then
	command -v unshare >/dev/null || { echo "$0: unshare not found (util-linux)" >&2; exit 1; }
	RPROF_OTHER_HOST=1 exec unshare --mount --propagation private "$0" "$@"
fi

machines=$here/../pmu/testdata/machines
case $(sed -n 's/^vendor_id[[:space:]]*: //p' /proc/cpuinfo | head -n 1) in
AuthenticAMD) fake=$machines/vm-intel-amx/proc/cpuinfo ;;
GenuineIntel) fake=$machines/zen4/proc/cpuinfo ;;
*)
	echo "$0: not an Intel or AMD x86 host: no other vendor to show" >&2
	exit 1
	;;
esac

cpuinfo=$(mktemp)
# The fake machine's first processor block, once per CPU of this host,
# numbered as this host's are.
grep '^processor' /proc/cpuinfo | sed 's/^processor[[:space:]]*: //' | while read -r cpu; do
	awk -v cpu="$cpu" '/^$/ { exit } /^processor/ { print "processor\t: " cpu; next } { print }' "$fake"
	echo
done >"$cpuinfo"
mount --bind "$cpuinfo" /proc/cpuinfo
status=0
"$here/without-cache-sysfs.sh" "$@" || status=$?
umount -l /proc/cpuinfo 2>/dev/null || true
rm -f "$cpuinfo"
exit "$status"
