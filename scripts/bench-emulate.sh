#!/usr/bin/env bash
# Prints the slowdown of `rprof run --count emulate` against native runs for
# a STREAM-like kernel (with and without the cache model), dense FMA code
# (OpenBLAS DGEMM) and a mixed program, beside the prototype's figures. Each
# program runs native, under QEMU without the plugin, under the plugin
# without and with the model, and native again (A B C D A); each slowdown
# is the time over the mean of the two native runs. Needs gcc, qemu-user and libopenblas-dev.
#   ROUNDS=3 scripts/bench-emulate.sh
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-1}
plugin=$PWD/measure/emulate/plugin/rprof-qemu-v1.so
src=$PWD/measure/emulate/testdata
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gcc -O2 -march=x86-64-v3 -o "$tmp/stream" "$src/stream.c"
gcc -O2 -march=x86-64-v3 -o "$tmp/dgemm" "$src/dgemm.c" -lopenblas
gcc -O2 -march=x86-64-v3 -o "$tmp/mixed" "$src/mixed.c" -lm
# The plugin's cache= syntax (bytes:ways per level); rprof's default model.
model=${MODEL:-49152:12:1048576:16:33554432:16}

secs() { # runs "$@" and prints its wall time in seconds
	local t0 t1
	t0=$(date +%s.%N)
	"$@" >/dev/null 2>&1
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }'
}
emu() { # cache=SPEC prog args...
	local cache=$1
	shift
	rm -rf "$tmp/out" && mkdir "$tmp/out"
	qemu-x86_64 -plugin "$plugin,out=$tmp/out,line=64,cache=$cache" "$@"
}

printf 'load average: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
printf 'cache model: %s (bytes:ways per level)\n\n' "$model"
printf '%-38s %9s %11s %11s %11s   %s\n' program "native s" "QEMU alone" "no model" "with model" "prototype (no model / model)"
run() { # name prototype args...
	local name=$1 proto=$2
	shift 2
	for ((r = 0; r < rounds; r++)); do
		local a q b c d
		a=$(secs "$@")
		q=$(secs qemu-x86_64 "$@")
		b=$(secs emu none "$@")
		c=$(secs emu "$model" "$@")
		d=$(secs "$@")
		local nat
		nat=$(awk -v a="$a" -v d="$d" 'BEGIN { print (a + d) / 2 }')
		awk -v n="$name" -v t="$nat" -v q="$q" -v b="$b" -v c="$c" -v p="$proto" \
			'BEGIN { printf "%-38s %9.3f %10.1fx %10.1fx %10.1fx   %s\n", n, t, q / t, b / t, c / t, p }'
	done
}
run "STREAM triad, 3 x 64 MiB, 4 passes" "12x / 50x" "$tmp/stream" 8388608 4
OPENBLAS_NUM_THREADS=1 run "OpenBLAS DGEMM n=768, 1 thread" "300-400x" "$tmp/dgemm" 768
run "mixed (sort, libm, stencil, printf)" "-" "$tmp/mixed" 2000000
