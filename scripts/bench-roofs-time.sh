#!/usr/bin/env bash
# Prints where the time of `rprof roofs` goes: for each run, the wall time,
# the measured time (tuning.seconds: from the start of measuring, after any
# wait for another rprof's measurement lock) and its parts (compute,
# bandwidth, DGEMM), the time spent placing the sweeps' operands (first
# touch), the DGEMM roof and the peak resident memory (GNU time's maximum
# RSS); then, per mode, the median and range of each figure over the runs.
# The targets: default under 60 s on 2 cores (aim: under 30 s), --quick
# under 15 s, peak RSS under 2 GiB and under a quarter of MemAvailable
# (printed at the start).
#
# With BASE=REV it also builds that git revision and interleaves its runs
# with this tree's (A B B A ...), printing the per-pair ratio this/base of
# each figure (median and range), which survives a loaded machine far
# better than absolute times.
#
# usage: scripts/bench-roofs-time.sh [RUNS] [-- extra rprof roofs flags]
#   RUNS            runs per mode and binary (default 3)
# env:
#   MODES           "default quick" (default), or one of them
#   BASE            git revision to compare with (default: none)
# Needs jq. Each run's table and document stay in $KEEP if set.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
shift || true
[ "${1:-}" = -- ] && shift
extra=("$@")
modes=${MODES:-default quick}
command -v jq >/dev/null || { echo "bench-roofs-time: jq not found (apt-get install jq)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "bench-roofs-time: GNU time not found (apt-get install time)" >&2; exit 1; }

tmp=$(mktemp -d)
cleanup() {
	[ -n "${BASE:-}" ] && git worktree remove --force "$tmp/base-src" >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT
go build -o "$tmp/this" ./cmd/rprof
bins=(this)
if [ -n "${BASE:-}" ]; then
	git worktree add --detach "$tmp/base-src" "$BASE" >/dev/null 2>&1
	(cd "$tmp/base-src" && go build -o "$tmp/base" ./cmd/rprof)
	bins=(this base)
fi
load() { cut -d' ' -f1 /proc/loadavg; }

echo "# bench-roofs-time on $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) CPUs; $runs run(s) per mode${BASE:+, interleaved with $BASE (A B B A)}"
echo "# env: OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset} OPENBLAS_L2_SIZE=${OPENBLAS_L2_SIZE:-unset}; extra flags: ${extra[*]:-none}"
echo "# MemAvailable $(awk '/^MemAvailable:/ {printf "%d MiB, a quarter %d MiB", $2 / 1024, $2 / 4096}' /proc/meminfo); RSS target: at most 2048 MiB and that quarter"
printf '%-7s %-4s %3s %6s %6s %7s %7s %9s %7s %7s %9s %7s %s\n' mode bin run load wall measured compute bandwidth placing dgemm "gflops" "rss-MiB" "dgemm shape"
# figures FILE: wall measured compute bandwidth placing dgemm gflops (the
# columns the summary reads), one line.
: >"$tmp/rows"
for mode in $modes; do
	flag=()
	[ "$mode" = quick ] && flag=(--quick)
	for r in $(seq 1 "$runs"); do
		order=("${bins[@]}")
		# A B B A: every other run starts with the base.
		[ $((r % 2)) = 0 ] && [ ${#bins[@]} = 2 ] && order=(base this)
		for b in "${order[@]}"; do
			l0=$(load)
			t0=$EPOCHREALTIME
			/usr/bin/time -f %M -o "$tmp/$b-$mode-$r.rss" "$tmp/$b" roofs "${flag[@]}" "${extra[@]}" -o "$tmp/$b-$mode-$r.json" 2>"$tmp/$b-$mode-$r.txt"
			t1=$EPOCHREALTIME
			wall=$(echo "$t1 - $t0" | bc -l)
			rss=$(($(tail -1 "$tmp/$b-$mode-$r.rss") / 1024))
			read -r measured compute bandwidth placing dgemm gflops shape < <(jq -r '[.tuning.seconds, (.tuning.part_seconds.compute // 0), (.tuning.part_seconds.bandwidth // 0),
				([.tuning.steps[]? | select(.name | test("placing")) | .seconds] | add // 0), (.tuning.part_seconds.dgemm // 0),
				(.dgemm.gflops // 0), (if .dgemm then "n=\(.dgemm.n),m=\(.dgemm.m),k=\(.dgemm.k)" else "-" end)] | map(tostring) | join(" ")' "$tmp/$b-$mode-$r.json")
			printf '%-7s %-4s %3s %6s %6.1f %7.1f %7.1f %9.1f %7.1f %7.1f %9.2f %7d %s\n' "$mode" "$b" "$r" "$l0" "$wall" "$measured" "$compute" "$bandwidth" "$placing" "$dgemm" "$gflops" "$rss" "$shape"
			echo "$mode $b $r $wall $measured $compute $bandwidth $placing $dgemm $gflops $rss" >>"$tmp/rows"
			if [ -n "${KEEP:-}" ]; then
				mkdir -p "$KEEP" && cp "$tmp/$b-$mode-$r.json" "$tmp/$b-$mode-$r.txt" "$KEEP/"
			fi
		done
	done
done

echo
echo "median [min, max] over the runs, seconds (gflops: DGEMM GFLOP/s; rss: peak MiB)"
names=(wall measured compute bandwidth placing dgemm gflops rss)
for mode in $modes; do
	for b in "${bins[@]}"; do
		line="$mode $b:"
		for i in "${!names[@]}"; do
			col=$((i + 4))
			line="$line ${names[$i]} $(awk -v m="$mode" -v b="$b" -v c="$col" '$1 == m && $2 == b {print $c}' "$tmp/rows" | sort -g |
				awk '{x[NR] = $1} END {if (NR == 0) exit; med = NR % 2 ? x[(NR + 1) / 2] : (x[NR / 2] + x[NR / 2 + 1]) / 2; printf "%.1f [%.1f, %.1f]", med, x[1], x[NR]}')"
			[ "$i" -lt $((${#names[@]} - 1)) ] && line="$line,"
		done
		echo "  $line"
	done
	if [ ${#bins[@]} = 2 ]; then
		line="$mode this/base per run:"
		for i in "${!names[@]}"; do
			col=$((i + 4))
			line="$line ${names[$i]} $(awk -v m="$mode" -v c="$col" '$1 == m {v[$2 " " $3] = $c; runs[$3] = 1}
				END {for (r in runs) if (v["base " r] > 0) print v["this " r] / v["base " r]}' "$tmp/rows" | sort -g |
				awk '{x[NR] = $1} END {if (NR == 0) {printf "-"; exit}; med = NR % 2 ? x[(NR + 1) / 2] : (x[NR / 2] + x[NR / 2 + 1]) / 2; printf "%.3f [%.3f, %.3f]", med, x[1], x[NR]}')"
			[ "$i" -lt $((${#names[@]} - 1)) ] && line="$line,"
		done
		echo "  $line"
	fi
done
echo "# load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
