#!/usr/bin/env bash
# Measures what `rprof run` costs the program it measures, against the bare
# program and against `perf stat` (Debian's linux-perf), every comparison in
# interleaved runs (A B B A ...) so that both sides see the same machine
# load; each line prints the median with the min and max of the per-pair
# figures.
#   1. start-up against perf stat: `rprof run -e task-clock -- /bin/true`
#      and `perf stat -e task-clock -- /bin/true`, whole-command wall times
#      and their per-pair ratio (target: <= 1), then the CPU time of each
#      whole command (task-clock of its process tree, from an outer perf
#      stat), which a loaded machine disturbs less than wall time;
#   2. a 0.5 s CPU-bound target (spin.c): bare, under `rprof run` and under
#      `perf stat`, whole-command wall times; the ratios rprof/bare (target:
#      < 1.01), perf/bare and rprof/perf, the target's own T as rprof
#      reports it over the bare wall time, and the CPU-time ratios;
#   3. slowdown of a 2 s target: T from --json over the bare wall time, the
#      whole command over the bare one, and the target's CPU time
#      (task-clock under rprof, user+sys from /usr/bin/time bare), which a
#      busy machine disturbs far less than wall time.
# Wall times come from bash's $EPOCHREALTIME (microseconds, no fork). Without
# perf, the comparisons with it are skipped.
#
# usage: scripts/bench-run-overhead.sh [PAIRS]   (default 15)
# env:   RUN_FLAGS  flags for rprof run in part 3 (default: three software
#                   events, so it runs on machines without a hardware PMU)
#        SPIN_M     spin.c iterations in millions for 2 s (default: calibrated)
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${1:-15}
run_flags=${RUN_FLAGS:--e task-clock -e page-faults -e context-switches}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A lock file of its own: rprof run otherwise waits while any `rprof roofs`
# on the machine holds the measurement lock, which would time that wait
# rather than rprof. The figures are interleaved ratios, which hold under
# whatever load the machine carries.
export XDG_RUNTIME_DIR=$tmp
go build -o "$tmp/rprof" ./cmd/rprof
gcc -O2 -o "$tmp/spin" internal/launch/testdata/progs/spin.c
rprof=$tmp/rprof
spin=$tmp/spin
perf=$(command -v perf || true)
if [[ -n $perf ]] && ! "$perf" stat -e task-clock -- true >/dev/null 2>&1; then
	echo "perf stat does not run here: the comparisons with it are skipped"
	perf=
fi

now() { echo "$EPOCHREALTIME"; }
# median (min, max, n) of the numbers on stdin
stats() { sort -g | awk '{v[NR]=$1} END {m=(NR%2)?v[(NR+1)/2]:(v[NR/2]+v[NR/2+1])/2; printf "%.4f (min %.4f, max %.4f, n=%d)\n", m, v[1], v[NR], NR}'; }
# wall seconds of one command, its output discarded
wall() {
	local t0 t1
	t0=$(now)
	"$@" >/dev/null 2>&1 || true
	t1=$(now)
	awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.6f\n", b-a}'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.6f\n", a/b}'; }
# CPU seconds of one command's process tree (task-clock from an outer perf
# stat, which counts from the command's exec)
cpu() {
	"$perf" stat -x, -o "$tmp/cpu.csv" -e task-clock -- "$@" >/dev/null 2>&1 || true
	awk -F, '/task-clock/ {printf "%.6f\n", $1/1e3}' "$tmp/cpu.csv"
}

# spin iterations (millions) for about $1 s of CPU, by CPU time, which a
# busy machine disturbs less than wall time
calibrate() {
	local cpu
	cpu=$(/usr/bin/time -f '%U %S' "$spin" 400 2>&1 >/dev/null | tail -1)
	echo "$cpu" | awk -v s="$1" '{t=$1+$2; m=(t>0)?int(400*s/t):400; print (m<1)?1:m}'
}

echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) (ratios of interleaved runs hold under load; absolute times do not)"
echo

if [[ -n $perf ]]; then
	echo "1. start-up: rprof run -e task-clock -- /bin/true against perf stat -e task-clock -- /bin/true, $pairs interleaved pairs"
	: >"$tmp/r"
	: >"$tmp/p"
	: >"$tmp/rp"
	for ((i = 0; i < pairs; i++)); do
		if ((i % 2 == 0)); then
			r=$(wall "$rprof" run -e task-clock -- /bin/true)
			p=$(wall "$perf" stat -e task-clock -- /bin/true)
		else
			p=$(wall "$perf" stat -e task-clock -- /bin/true)
			r=$(wall "$rprof" run -e task-clock -- /bin/true)
		fi
		echo "$r" >>"$tmp/r"
		echo "$p" >>"$tmp/p"
		ratio "$r" "$p" >>"$tmp/rp"
	done
	echo "  rprof run (s):        $(stats <"$tmp/r")"
	echo "  perf stat (s):        $(stats <"$tmp/p")"
	echo "  rprof run / perf stat: $(stats <"$tmp/rp")   target <= 1"
	: >"$tmp/rc"
	: >"$tmp/pc"
	: >"$tmp/rpc"
	for ((i = 0; i < pairs; i++)); do
		r=$(cpu "$rprof" run -e task-clock -- /bin/true)
		p=$(cpu "$perf" stat -e task-clock -- /bin/true)
		echo "$r" >>"$tmp/rc"
		echo "$p" >>"$tmp/pc"
		ratio "$r" "$p" >>"$tmp/rpc"
	done
	echo "  CPU time (s), rprof run:  $(stats <"$tmp/rc")"
	echo "  CPU time (s), perf stat:  $(stats <"$tmp/pc")"
	echo "  CPU time, rprof / perf:   $(stats <"$tmp/rpc")"
	echo
fi

half=$(calibrate 0.5)
echo "2. a 0.5 s CPU-bound target (spin $half): bare, rprof run -e task-clock, perf stat -e task-clock; $pairs interleaved triples"
: >"$tmp/b"
: >"$tmp/rb"
: >"$tmp/tb"
: >"$tmp/pb"
: >"$tmp/rp"
for ((i = 0; i < pairs; i++)); do
	# rotate the order so that no side always follows the same one
	for k in 0 1 2; do
		case $(((i + k) % 3)) in
		0) b=$(wall "$spin" "$half") ;;
		1) r=$(wall "$rprof" run -e task-clock --json "$tmp/half.json" -- "$spin" "$half") ;;
		2) if [[ -n $perf ]]; then p=$(wall "$perf" stat -e task-clock -- "$spin" "$half"); fi ;;
		esac
	done
	t=$(grep -o '"seconds": *[0-9.eE+-]*' "$tmp/half.json" | head -1 | sed 's/.*: *//')
	echo "$b" >>"$tmp/b"
	ratio "$r" "$b" >>"$tmp/rb"
	ratio "$t" "$b" >>"$tmp/tb"
	if [[ -n $perf ]]; then
		ratio "$p" "$b" >>"$tmp/pb"
		ratio "$r" "$p" >>"$tmp/rp"
	fi
done
echo "  bare wall time (s):                        $(stats <"$tmp/b")"
echo "  whole rprof run / bare:                    $(stats <"$tmp/rb")   target < 1.01"
echo "  target's T (rprof --json) / bare:          $(stats <"$tmp/tb")"
if [[ -n $perf ]]; then
	echo "  whole perf stat / bare:                    $(stats <"$tmp/pb")"
	echo "  whole rprof run / whole perf stat:         $(stats <"$tmp/rp")"
	: >"$tmp/rbc"
	: >"$tmp/pbc"
	for ((i = 0; i < pairs; i++)); do
		b=$(cpu "$spin" "$half")
		r=$(cpu "$rprof" run -e task-clock -- "$spin" "$half")
		p=$(cpu "$perf" stat -e task-clock -- "$spin" "$half")
		ratio "$r" "$b" >>"$tmp/rbc"
		ratio "$p" "$b" >>"$tmp/pbc"
	done
	echo "  CPU time, whole rprof run / bare:          $(stats <"$tmp/rbc")"
	echo "  CPU time, whole perf stat / bare:          $(stats <"$tmp/pbc")"
fi
echo

SPIN_M=${SPIN_M:-$(calibrate 2)}
slow_pairs=$(((pairs + 1) / 2))
echo "3. slowdown: spin $SPIN_M (about 2 s), rprof run $run_flags, $slow_pairs pairs"
: >"$tmp/target"
: >"$tmp/whole"
: >"$tmp/bare"
: >"$tmp/cpu"
for ((i = 0; i < slow_pairs; i++)); do
	t0=$(now)
	/usr/bin/time -o "$tmp/time" -f '%U %S' "$spin" "$SPIN_M"
	t1=$(now)
	# shellcheck disable=SC2086
	"$rprof" run $run_flags --json "$tmp/point.json" -- "$spin" "$SPIN_M" 2>/dev/null
	t2=$(now)
	# the first "seconds" with a number is the point's T
	t=$(grep -o '"seconds": *[0-9.eE+-]*' "$tmp/point.json" | head -1 | sed 's/.*: *//')
	# task-clock's value (ns): the first "value" after its name
	tc=$(awk '/"name": "task-clock"/ {f=1} f && /"value":/ {gsub(/[^0-9.eE+-]/, "", $2); print $2; exit}' "$tmp/point.json")
	if [[ -n $tc ]]; then
		awk -v tc="$tc" '{printf "%.6f\n", tc/1e9/($1+$2)}' "$tmp/time" >>"$tmp/cpu"
	fi
	awk -v a="$t0" -v b="$t1" -v c="$t2" -v t="$t" 'BEGIN {
		printf "%.6f\n", t/(b-a) >> "'"$tmp/target"'"
		printf "%.6f\n", (c-b)/(b-a) >> "'"$tmp/whole"'"
		printf "%.6f\n", b-a >> "'"$tmp/bare"'" }'
done
echo "  bare wall time (s):                           $(stats <"$tmp/bare")"
echo "  target's T under rprof run / bare:            $(stats <"$tmp/target")   target < 1.01"
echo "  whole rprof run command / bare (start-up in): $(stats <"$tmp/whole")"
if [[ -s $tmp/cpu ]]; then
	echo "  target's CPU time under rprof run / bare:     $(stats <"$tmp/cpu")"
fi
