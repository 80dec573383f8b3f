#!/usr/bin/env bash
# Runs the README's "A first session" as written, on a fresh clone of this
# checkout's HEAD, with rprof installed as the README's Install section
# says. Where `rprof doctor` finds no counters (exit 1), the session's
# `rprof run` line is replaced by the README's own line for machines
# without a PMU. Every other line must succeed.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git clone -q "$repo" "$work/rprof"
cd "$work/rprof"
GOBIN="$work/bin" go install ./cmd/rprof
export PATH="$work/bin:$PATH"
export XDG_CACHE_HOME="$work/cache" # roofs of this run only

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
echo "first-session: the README's session ran as written (counters: $counters)" >&2
