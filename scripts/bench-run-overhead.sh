#!/usr/bin/env bash
# Measures what `rprof run` costs the program it measures (issue 3, Speed):
#   1. slowdown: a fixed-work CPU-bound target of about 2 s (spin.c) run bare
#      and under `rprof run`, in alternating pairs so both see the same load;
#      prints the median of the per-pair ratios of the target's wall time as
#      rprof reports it (T in --json, target: < 1.01), of the whole
#      `rprof run` command, start-up included, and of the target's CPU time
#      (task-clock under rprof, user+sys from /usr/bin/time bare), which a
#      busy machine disturbs far less than wall time;
#   2. start-up: the time from starting rprof to the target's first
#      instruction, minus the same for a bare start (target: < 50 ms), read
#      from $EPOCHREALTIME printed by a bash target.
# Wall times come from bash's $EPOCHREALTIME (microseconds, no fork).
#
# usage: scripts/bench-run-overhead.sh [PAIRS]   (default 7)
# env:   RUN_FLAGS  flags for rprof run (default: three software events, so
#                   it runs on machines without a hardware PMU)
#        SPIN_M     spin.c iterations in millions (default: calibrated to 2 s)
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${1:-7}
run_flags=${RUN_FLAGS:--e task-clock -e page-faults -e context-switches}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/rprof" ./cmd/rprof
gcc -O2 -o "$tmp/spin" internal/launch/testdata/progs/spin.c
rprof=$tmp/rprof
spin=$tmp/spin

now() { echo "$EPOCHREALTIME"; }
# median of the numbers on stdin; "lo hi" = min max as a rough spread
stats() { sort -g | awk '{v[NR]=$1} END {m=(NR%2)?v[(NR+1)/2]:(v[NR/2]+v[NR/2+1])/2; printf "%.4f (min %.4f, max %.4f, n=%d)\n", m, v[1], v[NR], NR}'; }

if [[ -z ${SPIN_M:-} ]]; then
	# by CPU time, which a busy machine disturbs less than wall time
	cpu=$(/usr/bin/time -f '%U %S' "$spin" 400 2>&1 >/dev/null | tail -1)
	SPIN_M=$(echo "$cpu" | awk '{t=$1+$2; m=(t>0)?int(400*2/t):400; print (m<1)?1:m}')
fi
echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) (figures on a shared machine are noisy)"
echo "rprof run flags: $run_flags"
echo

echo "slowdown: spin $SPIN_M, $pairs pairs"
: >"$tmp/target"
: >"$tmp/whole"
: >"$tmp/bare"
: >"$tmp/cpu"
for ((i = 0; i < pairs; i++)); do
	t0=$(now); /usr/bin/time -o "$tmp/time" -f '%U %S' "$spin" "$SPIN_M"; t1=$(now)
	# shellcheck disable=SC2086
	"$rprof" run $run_flags --json "$tmp/point.json" -- "$spin" "$SPIN_M" 2>/dev/null; t2=$(now)
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
echo "  bare wall time (s):                          $(stats <"$tmp/bare")"
echo "  target's T under rprof run / bare:           $(stats <"$tmp/target")   target < 1.01"
echo "  whole rprof run command / bare (start-up in): $(stats <"$tmp/whole")"
if [[ -s $tmp/cpu ]]; then
	echo "  target's CPU time under rprof run / bare:    $(stats <"$tmp/cpu")"
fi
echo

echo "start-up before the target's exec: 20 pairs"
: >"$tmp/startup"
for ((i = 0; i < 20; i++)); do
	t0=$(now); t1=$(bash -c 'echo $EPOCHREALTIME')
	t2=$(now)
	# shellcheck disable=SC2086
	t3=$("$rprof" run $run_flags -- bash -c 'echo $EPOCHREALTIME' 2>/dev/null)
	awk -v a="$t0" -v b="$t1" -v c="$t2" -v d="$t3" 'BEGIN {printf "%.3f\n", ((d-c)-(b-a))*1e3}' >>"$tmp/startup"
done
echo "  rprof run start-up (ms, rprof start to target start, minus bare): $(stats <"$tmp/startup")   target < 50"
