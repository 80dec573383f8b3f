#!/bin/sh
# capture-sysfs.sh copies the parts of /sys and /proc that rprof reads (PMUs,
# CPU topology and caches, NUMA nodes, cpuinfo, perf sysctls) into a plain
# directory tree usable as a test fixture:
#
#	scripts/capture-sysfs.sh pmu/testdata/machines/<name> [note]
#
# Symlinks are resolved and every file is copied as a regular file, so the
# tree works with os.DirFS and needs no unpacking. The tree's README records
# the host model and kernel; the optional note is added to it.
set -eu

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	echo "usage: $0 DEST [NOTE]" >&2
	exit 2
fi
dest=$1
note=${2:-}
SYS=${SYS:-/sys}
PROC=${PROC:-/proc}

if [ -e "$dest/sys" ] || [ -e "$dest/proc" ]; then
	echo "$0: $dest already holds a capture; remove it first" >&2
	exit 1
fi

# copy SRC DST: one regular file, skipping those the kernel will not let us
# read (some sysfs attributes are write-only or root-only).
copy() {
	mkdir -p "$(dirname "$2")"
	if ! cat "$1" >"$2" 2>/dev/null; then
		rm -f "$2"
	fi
}

# PMUs: identity, masks, formats and event aliases.
for pmu in "$SYS"/bus/event_source/devices/*; do
	name=$(basename "$pmu")
	out=$dest/sys/bus/event_source/devices/$name
	for f in type cpumask cpus; do
		[ -f "$pmu/$f" ] && copy "$pmu/$f" "$out/$f"
	done
	for d in format events; do
		[ -d "$pmu/$d" ] || continue
		mkdir -p "$out/$d"
		for f in "$pmu/$d"/*; do
			[ -f "$f" ] && copy "$f" "$out/$d/$(basename "$f")"
		done
	done
done

# CPUs: online/possible, and each CPU's topology and caches.
cpu=$SYS/devices/system/cpu
for f in online possible present; do
	copy "$cpu/$f" "$dest/sys/devices/system/cpu/$f"
done
for c in "$cpu"/cpu[0-9]*; do
	n=$(basename "$c")
	out=$dest/sys/devices/system/cpu/$n
	if [ -d "$c/topology" ]; then
		for f in "$c"/topology/*; do
			[ -f "$f" ] && copy "$f" "$out/topology/$(basename "$f")"
		done
	fi
	for idx in "$c"/cache/index*; do
		[ -d "$idx" ] || continue
		for f in level type size shared_cpu_list coherency_line_size ways_of_associativity number_of_sets id; do
			[ -f "$idx/$f" ] && copy "$idx/$f" "$out/cache/$(basename "$idx")/$f"
		done
	done
done

# NUMA nodes.
node=$SYS/devices/system/node
if [ -d "$node" ]; then
	for f in online possible has_cpu; do
		[ -f "$node/$f" ] && copy "$node/$f" "$dest/sys/devices/system/node/$f"
	done
	for d in "$node"/node[0-9]*; do
		[ -f "$d/cpulist" ] && copy "$d/cpulist" "$dest/sys/devices/system/node/$(basename "$d")/cpulist"
	done
fi

# Machine identity, when the platform has DMI.
for f in sys_vendor product_name; do
	[ -f "$SYS/class/dmi/id/$f" ] && copy "$SYS/class/dmi/id/$f" "$dest/sys/class/dmi/id/$f"
done

# procfs: cpuinfo and the sysctls that decide what perf may count.
copy "$PROC/cpuinfo" "$dest/proc/cpuinfo"
for f in perf_event_paranoid nmi_watchdog perf_event_max_sample_rate; do
	[ -f "$PROC/sys/kernel/$f" ] && copy "$PROC/sys/kernel/$f" "$dest/proc/sys/kernel/$f"
done

model=$(sed -n 's/^model name[[:space:]]*:[[:space:]]*//p' "$PROC/cpuinfo" | head -n 1)
signature=$(awk -F: '/^vendor_id/ {v=$2} /^cpu family/ {f=$2} /^model[[:space:]]*:/ {m=$2} /^stepping/ {s=$2; exit}
	END {gsub(/ /, "", v); gsub(/ /, "", f); gsub(/ /, "", m); gsub(/ /, "", s); print v " family " f " model " m " stepping " s}' "$PROC/cpuinfo")
vendor=$(cat "$SYS/class/dmi/id/sys_vendor" 2>/dev/null || echo "no DMI")
product=$(cat "$SYS/class/dmi/id/product_name" 2>/dev/null || echo "no DMI")
{
	echo "# $(basename "$dest")"
	echo
	echo "Captured with scripts/capture-sysfs.sh on $(date -u +%Y-%m-%d) (not constructed)."
	echo
	echo "- CPU: ${model:-unknown} ($signature), $(grep -c '^processor' "$PROC/cpuinfo") logical CPUs"
	echo "- Platform: $vendor / $product"
	echo "- Kernel: $(uname -s) $(uname -r) $(uname -m)"
	echo "- PMUs: $(cd "$SYS/bus/event_source/devices" && echo *)"
	if [ -n "$note" ]; then
		echo
		echo "$note"
	fi
} >"$dest/README.md"
echo "captured into $dest" >&2
