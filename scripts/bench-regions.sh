#!/bin/sh
# What region probes cost, and how well rprof corrects for it.
#
# For a target calling a probed function N times this prints, per round
# (runs interleaved: unprobed, probed, probed, unprobed):
#   - the wall time the probes add per call: the median of the target's
#     own timing of each call of an empty function, probed minus not;
#   - the probe cost rprof calibrated at start-up for that function;
#   - the error of the region's median call as rprof reports it (probe
#     cost subtracted) against the target's own median of the same calls
#     run unprobed, and the error without the subtraction.
# Medians, because preemption on a loaded machine inflates some calls by
# milliseconds; the load average is printed first.
#
# Usage: scripts/bench-regions.sh [N] [SPIN_US] [ROUNDS]
# Needs root (or CAP_BPF and CAP_PERFMON), gcc and jq.
set -eu
N=${1:-20000}
SPIN_US=${2:-50}
ROUNDS=${3:-2}
SPIN_N=$((N / 10))

cd "$(dirname "$0")/.."
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
gcc -O1 -pthread -o "$dir/target" regions/testdata/target.c -ldl
go build -o "$dir/rprof" ./cmd/rprof
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs; $N calls of an empty function, $SPIN_N calls of a ${SPIN_US} us spin"

# own MODE ARGS...: the target's own median call (5th field of "own").
own() { "$dir/target" "$@" | awk '$1 == "own" { print $5 }'; }

# probed FN MODE ARGS...: the target's own median call under rprof with FN
# probed, then the region's median, its measured mean minus its mean (the
# cost subtracted per call), calibrated cost per call and inside a call,
# and the first instruction's kind.
probed() {
	fn=$1
	shift
	"$dir/rprof" run --region "$fn" --json "$dir/p.json" -- "$dir/target" "$@" 2>/dev/null >"$dir/out"
	awk '$1 == "own" { printf "%s ", $5 }' "$dir/out"
	jq -r '.regions[0] | "\(.median_seconds) \(.probe_call_seconds) \(.probe_cost_seconds) \(.probe_first_instruction)"' "$dir/p.json"
}

i=1
while [ "$i" -le "$ROUNDS" ]; do
	a1=$(own empty "$N")
	b1=$(probed empty empty "$N")
	p1=$(own spin "$SPIN_N" "$SPIN_US")
	s1=$(probed spin_us spin "$SPIN_N" "$SPIN_US")
	s2=$(probed spin_us spin "$SPIN_N" "$SPIN_US")
	p2=$(own spin "$SPIN_N" "$SPIN_US")
	b2=$(probed empty empty "$N")
	a2=$(own empty "$N")
	echo "$a1 $a2|$b1|$b2|$p1 $p2|$s1|$s2" | awk -v round="$i" -F'|' '{
		split($1, a, " "); split($2, b1, " "); split($3, b2, " ")
		split($4, p, " "); split($5, s1, " "); split($6, s2, " ")
		added = ((b1[1] + b2[1]) - (a[1] + a[2])) / 2 * 1e6
		cal = (b1[3] + b2[3]) / 2 * 1e6
		calin = (b1[4] + b2[4]) / 2 * 1e6
		ref = (p[1] + p[2]) / 2
		reg = (s1[2] + s2[2]) / 2
		raw = reg + (s1[4] + s2[4]) / 2
		printf "round %d: empty function (%s): probes add %.2f us per call; calibrated %.2f us per call, %.2f us inside\n", round, b1[5], added, cal, calin
		printf "round %d: %s us spin (%s): region median %.2f us vs own unprobed %.2f us: error %+.2f us (%+.2f%%) corrected, %+.2f us uncorrected\n",
			round, "'"$SPIN_US"'", s1[5], reg * 1e6, ref * 1e6, (reg - ref) * 1e6, 100 * (reg - ref) / ref, (raw - ref) * 1e6
	}'
	i=$((i + 1))
done
