#!/usr/bin/env bash
# Runs the README's "A first session" as written, on a fresh clone of this
# checkout's HEAD, with rprof installed as the README's Install section
# says. Where `rprof doctor` finds no counters (exit 1), the session's
# `rprof run` line is replaced by the README's own line for machines
# without a PMU. Every other line must succeed, and the point must be the
# TRIAD kernel's at a believable fraction of attainable (below).
set -euo pipefail
. "$(dirname "$0")/fresh-clone.sh" # roofs of this run only

# The section's indented blocks: the session, then the no-PMU run line.
blocks=$(awk '/^## A first session/ {on = 1; next} /^## / {on = 0} on' README.md |
	awk '/^    / {sub(/^    /, ""); print; prev = 1; next} prev && !/^    / {print "--"; prev = 0}')
session=$(printf '%s\n' "$blocks" | awk '/^--$/ {exit} {print}')
nopmu=$(printf '%s\n' "$blocks" | awk '/^--$/ {n++; next} n == 1 && /^rprof run/ {print}')
if [ -z "$session" ] || [ -z "$nopmu" ]; then
	echo "first-session: cannot find the session and the no-PMU run line in README.md" >&2
	exit 1
fi

counters=yes
while IFS= read -r line; do
	cmd=${line%%#*}
	case "$cmd" in
	"rprof doctor"*)
		echo "+ $cmd" >&2
		eval "$cmd" >/dev/null </dev/null || counters=no
		continue
		;;
	"rprof run"*)
		if [ "$counters" = no ]; then
			cmd=$nopmu
		fi
		;;
	esac
	echo "+ $cmd" >&2
	eval "$cmd" </dev/null
done <<<"$session"
for f in triad.json roofline.png report.html; do
	test -s "$f" || { echo "first-session: $f was not written" >&2; exit 1; }
done
# The point must be the kernel's, and believable: STREAM triad on one
# thread streams at most of the DRAM roof rprof roofs measured here, so its
# fraction of attainable lies in [0.3, 1.1]. Below 0.3 is what T of the
# whole process gave (0.16-0.21 on a KVM guest: first touch of 480 MB
# counted against the kernel's W and Q) or the wrong roofs; above 1.1 is
# beyond the roofs' and the time's intervals, so W, Q or T is wrong. The
# analytic Q (24 B per element) leaves out the write-allocate reads the
# roof's kernels do not make, so a quiet machine reads about 0.5-0.9. A
# machine busy with other work reads lower: run this alone.
fraction=$(grep -o '"fraction_of_attainable": *[0-9.eE+-]*' triad.json | head -n 1 | sed 's/.*: *//')
if [ -z "$fraction" ]; then
	echo "first-session: triad.json has no fraction_of_attainable: the point was not placed under the roofs" >&2
	exit 1
fi
shown=$(printf '%.2f' "$fraction")
if ! awk -v f="$fraction" 'BEGIN { exit !(f >= 0.3 && f <= 1.1) }'; then
	echo "first-session: the triad kernel reads $shown of attainable, outside [0.3, 1.1] (load: $(cut -d' ' -f1-3 /proc/loadavg))" >&2
	exit 1
fi
# TRIAD is single-threaded: its parallelism places it under the 1-thread
# roofs, whatever the machine's size.
threads=$(grep -o '"threads": *[0-9]*' triad.json | head -n 1 | sed 's/.*: *//')
rule=$(grep -o '"threads_rule": *"[a-z]*"' triad.json | head -n 1 | sed 's/.*: *"//; s/"$//')
if [ "$threads" != 1 ] || [ "$rule" != parallelism ]; then
	echo "first-session: the single-threaded triad was placed under the roofs of ${threads:-no} threads by rule ${rule:-none}, want 1 by its parallelism" >&2
	exit 1
fi
echo "first-session: the README's session ran as written (counters: $counters); the triad kernel reads $shown of attainable under the 1-thread roofs" >&2
