#!/usr/bin/env bash
# Runs the recipes of README.md and docs/*.md that a user would paste, as
# written, on a fresh clone of this checkout's HEAD with rprof installed as
# the README says. A recipe is a code block (indented, or fenced) right
# after a marker line
#
#   <!-- recipe: [setup: CMD;] [accept: 0 1 3;] [needs: TOOL ...;] -->
#
# setup: what the prose around the block asks for first (build the kernel,
# measure roofs), run before it; accept: the exit statuses that count as
# the recipe working (default 0; a gate's 1 and 3 are verdicts on this
# machine's timing noise, not broken docs); needs: tools without which the
# recipe is skipped, saying so (a word with .so in it is a shared library,
# found as ldconfig -p lists it: libdnnl.so. is any version of oneDNN).
# The blocks of one file run in order in one directory, a block starting
# with #! as a script file, others with bash.
# Usage: scripts/doc-recipes.sh [FILE.md...] (default: README.md docs/*.md)
set -euo pipefail
. "$(dirname "$0")/fresh-clone.sh"
export XDG_RUNTIME_DIR="$work/run"
mkdir -p "$XDG_RUNTIME_DIR"

if [ $# -eq 0 ]; then
	set -- README.md docs/*.md
fi
ran=0
for doc in "$@"; do
	out="$work/recipes/${doc//\//_}"
	mkdir -p "$out"
	# One file per recipe: N.sh (the block) and N.meta (the marker).
	awk -v out="$out" '
		function flush() { if (n > 0 && body != "") { printf "%s", body > (out "/" n ".sh"); close(out "/" n ".sh") } body = ""; inblock = 0; fenced = 0 }
		/^<!-- recipe:.*-->$/ { flush(); n++; meta = $0; sub(/^<!-- recipe:/, "", meta); sub(/-->$/, "", meta); print meta > (out "/" n ".meta"); close(out "/" n ".meta"); want = 1; next }
		want && /^```/ && !fenced { fenced = 1; inblock = 1; next }
		fenced && /^```/ { flush(); want = 0; next }
		fenced { body = body $0 "\n"; next }
		want && /^    / { inblock = 1; line = $0; sub(/^    /, "", line); body = body line "\n"; next }
		want && inblock { flush(); want = 0; next }
		want && /^$/ { next }
		want { print FILENAME ": recipe marker not followed by a code block" > "/dev/stderr"; exit 1 }
		END { flush() }
	' "$doc"
	for meta in $(ls "$out"/*.meta 2>/dev/null | sort -V); do
		block=${meta%.meta}.sh
		m=$(cat "$meta")
		field() { printf '%s\n' "$m" | tr ';' '\n' | sed -n "s/^ *$1: *//p"; }
		setup=$(field setup)
		accept=$(field accept)
		needs=$(field needs)
		missing=""
		for tool in $needs; do
			case "$tool" in
			# awk reads all of ldconfig's list: grep -q would stop early and,
			# under pipefail, fail the pipe by SIGPIPE even on a match.
			*.so*) ldconfig -p | awk -v lib="$tool" 'index($1, lib) == 1 { found = 1 } END { exit !found }' || missing="$missing $tool" ;;
			*) command -v "$tool" >/dev/null || missing="$missing $tool" ;;
			esac
		done
		if [ -n "$missing" ]; then
			echo "doc-recipes: $doc: recipe $(basename "$block" .sh) skipped: no$missing here" >&2
			continue
		fi
		if [ -n "$setup" ]; then
			echo "+ (setup) $setup" >&2
			bash -ec "$setup" </dev/null
		fi
		sed 's/^/+ /' "$block" >&2
		status=0
		if head -n 1 "$block" | grep -q '^#!'; then
			cp "$block" "$work/recipe" && chmod +x "$work/recipe"
			"$work/recipe" </dev/null || status=$?
		else
			bash -e "$block" </dev/null || status=$?
		fi
		if ! printf ' %s ' ${accept:-0} | grep -q " $status "; then
			echo "doc-recipes: $doc: recipe $(basename "$block" .sh) exited $status (accepted: ${accept:-0})" >&2
			exit 1
		fi
		ran=$((ran + 1))
	done
done
echo "doc-recipes: $ran recipes ran as written" >&2
