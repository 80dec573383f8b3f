#!/usr/bin/env bash
# Measures rprof's roofs and likwid-bench's figures interleaved in one run on
# this machine (A B B A: an rprof default run, two likwid-bench passes, a
# second rprof run; each rprof run is paired with the likwid pass next to
# it, so drift of the machine between them is small), and prints:
#   - FMA peaks against likwid-bench peakflops_{avx512_fma,avx_fma,sse}
#     (double and single precision) at each thread count;
#   - L1, L2, L3 and DRAM bandwidth against likwid-bench's best kernel of
#     stream_mem, stream, load, update, daxpy, triad (fma), copy, store and
#     ddot (avx512; update was best at L2, L3 and DRAM on the Zen 5 guest,
#     daxpy at L1 and DRAM, triad_avx512_fma at L1 on the Intel guest), at
#     rprof's own working set or at half the level's size (from rprof's
#     document: level_bytes, whatever its source), 32 kB per thread in L1,
#     or 1 GB in DRAM. A
#     selection pass first runs them all against a --quick document; each
#     pair then times only the one that read highest there, once, as the
#     DGEMM loop's best shape is timed again;
#   - the DGEMM roof against the best cblas_dgemm rate of a plain C loop over
#     seed 000's 96 shapes, with the same library and thread count, and
#     against that best shape timed again (the best of 96 noisy figures is
#     biased upward);
#   - wall time of each default run and of --quick;
#   - optionally early stopping against --fixed, and the DRAM ceiling
#     early-stopped against --fixed 200 in paired rounds.
# Needs likwid (apt-get install likwid), jq, bc, and for the DGEMM baseline a
# C compiler and OpenBLAS. Extra arguments go to every rprof roofs run (e.g.
# --blas-arch SkylakeX).
#
# Knobs (environment):
#   ROUNDS=N          A B B A rounds (default 1: two rprof runs, two likwid passes)
#   LIKWID_SECONDS=S  likwid-bench -s, whole seconds (default 1; likwid 5.2.2
#                     reads "-s 0.5" as 0 s and runs 10 iterations, and
#                     "-s 500ms" hung)
#   QUICK=0           skip timing rprof roofs --quick (default 1)
#   SELECT=0          no selection pass: each likwid pass takes the best of
#                     every bandwidth kernel at every size (default 1: a
#                     selection pass first, then one run per roof and pass)
#   DGEMM_LOOP=0      skip the C cblas_dgemm loop (default 1; about a minute)
#   LIKWID=0          skip the likwid-bench passes: rprof's runs and the C
#                     DGEMM loop only (no likwid needed)
#   FIXED=N           also run --threads 1 with --fixed N --invocations
#                     FIXED_INV (default 3) against early stopping (default 0: off)
#   DRAM_ROUNDS=N     paired DRAM early-vs-fixed rounds (default 0: off)
#   KEEP=DIR          keep every run's document, stderr and likwid figures
#                     in DIR (default: removed at exit)
set -euo pipefail
cd "$(dirname "$0")/.."

tools="likwid-bench jq"
[ "${LIKWID:-1}" = 0 ] && tools=jq
for tool in $tools; do
	command -v "$tool" >/dev/null || { echo "compare-likwid: $tool not found (apt-get install likwid jq)" >&2; exit 1; }
done
tmp=$(mktemp -d)
keep() {
	[ -z "${KEEP:-}" ] || { mkdir -p "$KEEP" && cp "$tmp"/*.json "$tmp"/*.txt "$tmp"/*.tsv "$tmp"/times "$KEEP"/ 2>/dev/null; }
	rm -rf "$tmp"
}
trap keep EXIT
go build -o "$tmp/rprof" ./cmd/rprof

ncpu=$(nproc)
threads="1"
[ "$ncpu" -gt 1 ] && threads="1 $ncpu"
rounds=${ROUNDS:-1}
lsecs=${LIKWID_SECONDS:-1}
fixed=${FIXED:-0}
fixed_inv=${FIXED_INV:-3}
case $lsecs in *[!0-9]* | "" | 0) echo "compare-likwid: LIKWID_SECONDS must be a whole number of seconds >= 1" >&2; exit 2 ;; esac

now() { date +%s.%N; }
secs() { echo "$2 - $1" | bc -l | xargs printf '%.1f'; }
ratio() { echo "$1 / $2" | bc -l | xargs printf '%.3f'; }
load() { cut -d' ' -f1-3 /proc/loadavg; }

echo "# compare-likwid on $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $ncpu CPUs, load average $(load)"
echo "# $rounds round(s) of A B B A (rprof, likwid-bench, likwid-bench, rprof); likwid-bench -s $lsecs"

# rprof DOC: one default run, timed.
rprof_run() {
	local t0 t1
	t0=$(now)
	"$tmp/rprof" roofs -o "$tmp/$1.json" "${extra[@]}" 2>"$tmp/$1.txt"
	t1=$(now)
	echo "$1 $(secs "$t0" "$t1") $(load)" >>"$tmp/times"
}

# likwid-bench figure: MFlops/s or MByte/s, in G.
lb() { # test size threads field
	likwid-bench -s "$lsecs" -t "$1" -W "N:$2:$3" 2>/dev/null | awk -v f="$4" '$1 == f":" {printf "%.4f\n", $2 / 1000}'
}

compute_pairs="avx512-fma-fp64:peakflops_avx512_fma avx2-fma-fp64:peakflops_avx_fma sse-fma-fp64:peakflops_sse avx512-fma-fp32:peakflops_sp_avx512_fma avx2-fma-fp32:peakflops_sp_avx_fma sse-fma-fp32:peakflops_sp_sse"

# triad_avx512_fma at 32 kB per thread was likwid-bench's best L1 kernel on
# an Intel AVX-512 guest (issue 25); copy, store and ddot complete the set.
bw_kernels="stream_mem_avx512 stream_avx512 load_avx512 update_avx512 daxpy_avx512 triad_avx512_fma copy_avx512 store_avx512 ddot_avx512"

# bw_sizes DOC T LEVEL: the working sets likwid-bench runs at for a
# bandwidth roof, as "kind size" lines: rprof's working set (ws), half the
# level's size (half; level_bytes, whatever its source), in L1 32 kB per
# thread and in DRAM 1 GB.
bw_sizes() {
	jq -r --arg l "$3" --argjson t "$2" '.bandwidth[] | select(.level == $l and .threads == $t) |
		"ws \(.working_set_bytes / 1024 | floor)kB", (if .level_bytes then "half \(.level_bytes / 2048 | floor)kB" else empty end)' "$1"
	[ "$3" = DRAM ] && echo "1g 1000000kB"
	[ "$3" = L1 ] && echo "32k $((32 * $2))kB" # 32 kB per thread (-W sizes are totals)
	return 0
}

# bw_runs DOC T LEVEL [KERNEL KIND]: runs likwid-bench for the bandwidth
# roof of DOC at level LEVEL on T threads, every kernel at every size, or
# only KERNEL at size kind KIND, as "kernel kind value" lines (GB/s).
bw_runs() {
	local kind size k v
	while read -r kind size; do
		for k in $bw_kernels; do
			[ -z "${4:-}" ] || [ "$4 $5" = "$k $kind" ] || continue
			v=$(lb "$k" "$size" "$2" MByte/s)
			[ -z "$v" ] || echo "$k $kind $v"
		done
	done < <(bw_sizes "$1" "$2" "$3")
}

# likwid_pass DOC OUT: every likwid figure rprof's document DOC has a roof
# for, as "key value" lines: c:THREADS:KERNEL and b:THREADS:LEVEL. A
# bandwidth roof is one run of the kernel and size kind the selection pass
# chose for it (selected.tsv), or, without one, the best of every kernel
# at every size.
likwid_pass() {
	local doc=$tmp/$1.json out=$tmp/$2.tsv t pair rk lk l level best sel
	: >"$out"
	for t in $threads; do
		for pair in $compute_pairs; do
			rk=${pair%%:*} lk=${pair##*:}
			l=$(lb "$lk" "$((16 * t))kB" "$t" MFlops/s)
			[ -n "$l" ] && echo "c:$t:$rk $l" >>"$out"
		done
		for level in $(jq -r --argjson t "$t" '.bandwidth[] | select(.threads == $t) | .level' "$doc"); do
			sel=$(awk -v key="b:$t:$level" '$1 == key {print $2, $3}' "$tmp/selected.tsv" 2>/dev/null || true)
			# shellcheck disable=SC2086 # sel is a kernel and a kind, or nothing
			best=$(bw_runs "$doc" "$t" "$level" $sel | awk '$3 > b {b = $3} END {print b + 0}')
			echo "b:$t:$level $best" >>"$out"
		done
	done
}

# select_pass DOC: runs every kernel at every size for each bandwidth roof
# of DOC and keeps, in selected.tsv, the kernel and size kind that read
# highest, with that figure: "key kernel kind value". The paired passes then
# time only that one, as the C loop times its best DGEMM shape again: the
# best of ten to fifteen noisy one-second runs is biased upward (one
# thread's DRAM bandwidth moved by 8% within a minute on the Zen 5 guest).
select_pass() {
	local doc=$tmp/$1.json t level
	: >"$tmp/all.tsv"
	for t in $threads; do
		for level in $(jq -r --argjson t "$t" '.bandwidth[] | select(.threads == $t) | .level' "$doc"); do
			bw_runs "$doc" "$t" "$level" | sed "s/^/b:$t:$level /" >>"$tmp/all.tsv"
		done
	done
	sort -k1,1 -k4,4gr "$tmp/all.tsv" | awk '!seen[$1]++' >"$tmp/selected.tsv"
}

# rprof_figures DOC OUT: the same keys from an rprof document.
rprof_figures() {
	jq -r '(.compute[] | "c:\(.threads):\(.name) \(.gflops)"), (.bandwidth[] | "b:\(.threads):\(.level) \(.gbytes_per_s)")' "$tmp/$1.json" >"$tmp/$2.tsv"
}

extra=("$@")
: >"$tmp/times"
pairs=()
# The --quick run is timed, and its document is what the selection pass
# runs likwid-bench's kernels against.
if [ "${QUICK:-1}" != 0 ] || { [ "${SELECT:-1}" != 0 ] && [ "${LIKWID:-1}" != 0 ]; }; then
	t0=$(now)
	"$tmp/rprof" roofs --quick -o "$tmp/quick.json" "$@" 2>"$tmp/quick.txt"
	t1=$(now)
	if [ "${QUICK:-1}" != 0 ]; then
		echo "quick $(secs "$t0" "$t1") $(load)" >>"$tmp/times"
	fi
fi
if [ "${SELECT:-1}" != 0 ] && [ "${LIKWID:-1}" != 0 ]; then
	select_pass quick
fi
for r in $(seq 1 "$rounds"); do
	rprof_run "r${r}a"
	if [ "${LIKWID:-1}" != 0 ]; then
		likwid_pass "r${r}a" "l${r}a"
		likwid_pass "r${r}a" "l${r}b"
	else
		: >"$tmp/l${r}a.tsv"
		: >"$tmp/l${r}b.tsv"
	fi
	rprof_run "r${r}b"
	rprof_figures "r${r}a" "p${r}a"
	rprof_figures "r${r}b" "p${r}b"
	pairs+=("${r}a" "${r}b")
done
last=r${rounds}b

# The C loop runs right after an rprof default run: this VM's DGEMM rate
# drifts by a few percent over minutes, more than the figures differ by.
lib=$(ls /usr/lib/*-linux-gnu/libopenblas.so.0 2>/dev/null | head -1 || true)
rt=$(jq -r '.dgemm.threads // empty' "$tmp/$last.json")
rg=$(jq -r '.dgemm.gflops // empty' "$tmp/$last.json")
dgemm_skip=
if [ "${DGEMM_LOOP:-1}" = 0 ]; then
	dgemm_skip="DGEMM_LOOP=0"
elif ! command -v cc >/dev/null || [ -z "$lib" ]; then
	dgemm_skip="needs a C compiler and libopenblas.so.0"
elif [ -z "$rg" ]; then
	dgemm_skip="rprof measured no DGEMM roof: $(grep 'DGEMM skipped' "$tmp/$last.txt" || true)"
else
	cat >"$tmp/dgemm.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
void cblas_dgemm(int, int, int, int, int, int, double, const double *, int, const double *, int, double, double *, int);
void openblas_set_num_threads(int);
static double *a, *b, *c;
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
static double call(int n, int m, int k) {
	double t = now();
	cblas_dgemm(101, 111, 111, n, m, k, 1, a, k, b, m, 0, c, m);
	return 2.0 * n * m * k / (now() - t) / 1e9;
}
static int cmp(const void *x, const void *y) { double d = *(const double *)x - *(const double *)y; return (d > 0) - (d < 0); }
/* A warm-up call, then r timed calls (r odd): their median. */
static double rate(int n, int m, int k, int r, double *best) {
	double g[16];
	call(n, m, k);
	for (int i = 0; i < r; i++) {
		g[i] = call(n, m, k);
		if (best && g[i] > *best) *best = g[i];
	}
	qsort(g, r, sizeof *g, cmp);
	return g[r / 2];
}
/* Over seed 000's 96 shapes, 3 timed calls each: the best single call and
   the best per-shape median. That shape won as the highest of 96 noisy
   figures, which biases its figure upward, so it is timed again with 9
   calls, and so is rprof's shape (argv 2..4): the last two are like for
   like. */
int main(int argc, char **argv) {
	int threads = atoi(argv[1]), rn = atoi(argv[2]), rm = atoi(argv[3]), rk = atoi(argv[4]);
	int ns[] = {500, 1000, 2000, 4000}, ks[] = {64, 128, 256, 512, 1024, 2048};
	openblas_set_num_threads(threads);
	a = malloc(sizeof(double) * 4000 * 2048), b = malloc(sizeof(double) * 2048 * 4000), c = malloc(sizeof(double) * 4000 * 4000);
	for (long i = 0; i < 4000L * 2048; i++) a[i] = b[i] = 1.0 + (i % 7) / 8.0;
	double best = 0, bestmed = 0;
	int mn = 0, mm = 0, mk = 0;
	for (int x = 0; x < 6; x++) for (int y = 0; y < 4; y++) for (int z = 0; z < 4; z++) {
		int k = ks[x], n = ns[y], m = ns[z];
		double med = rate(n, m, k, 3, &best);
		if (med > bestmed) { bestmed = med; mn = n; mm = m; mk = k; }
	}
	double again = rate(mn, mm, mk, 9, NULL), at = rate(rn, rm, rk, 9, NULL);
	printf("%.4f %.4f %d %d %d %.4f %.4f\n", best, bestmed, mn, mm, mk, again, at);
	return 0;
}
EOF
	cc -O2 -o "$tmp/dgemm" "$tmp/dgemm.c" "$lib"
	read -r rn rm rk < <(jq -r '.dgemm | "\(.n) \(.m) \(.k)"' "$tmp/$last.json")
	"$tmp/dgemm" "$rt" "$rn" "$rm" "$rk" >"$tmp/dgemm.out"
fi
echo
echo "wall time (s; targets: default < 60, --quick < 15), with the load average after each run:"
while read -r name s l1 l5 l15; do
	printf '  %-6s %6s s   load %s %s %s\n' "$name" "$s" "$l1" "$l5" "$l15"
done <"$tmp/times"

if [ -s "$tmp/selected.tsv" ]; then
	echo
	echo "likwid-bench's selection pass (every kernel at every size, GB/s): the best, which the pairs time again, and the runner-up"
	{
		echo "threads level kernel size best runner-up"
		sort -k1,1 -k4,4gr "$tmp/all.tsv" | awk '{n[$1]++} n[$1] == 1 {line[$1] = $0} n[$1] == 2 {second[$1] = $4}
			END {for (k in line) {split(line[k], f, " "); split(k, kk, ":"); printf "%s %s %s %s %.2f %.2f\n", kk[2], kk[3], f[2], f[3], f[4], second[k]}}' | sort -k1,1n -k2,2
	} | column -t
fi

echo
echo "rprof / likwid-bench, each rprof run against the likwid pass next to it (want >= 1; compute >= 0.97, bandwidth >= 0.95 at least)"
header="threads roof"
for p in "${pairs[@]}"; do header="$header rprof$p likwid$p ratio$p"; done
{
	echo "$header"
	sort -u "$tmp"/p*.tsv | cut -d' ' -f1 | sort -u -t: -k1,1r -k2,2n -k3,3 | while read -r key; do
		IFS=: read -r kind t name <<<"$key"
		line="$t $name"
		for p in "${pairs[@]}"; do
			r=$(awk -v k="$key" '$1 == k {print $2}' "$tmp/p$p.tsv")
			l=$(awk -v k="$key" '$1 == k {print $2}' "$tmp/l$p.tsv")
			if [ -n "$r" ] && [ -n "$l" ] && [ "$(echo "$l > 0" | bc -l)" = 1 ]; then
				line="$line $(printf '%.2f %.2f' "$r" "$l") $(ratio "$r" "$l")"
			else
				[ -n "$r" ] && r=$(printf '%.2f' "$r")
				line="$line ${r:--} ${l:--} -"
			fi
		done
		echo "$line"
	done
} | column -t

# spread NUM:DEN...: per roof, the ratios of figure file NUM to DEN over
# the pairs given: how many at or above 1, the lowest, the median and the
# highest.
spread() {
	{
		echo "kind threads roof >=1 lowest median highest"
		sort -u "$tmp"/p*.tsv | cut -d' ' -f1 | sort -u -t: -k1,1r -k2,2n -k3,3 | while read -r key; do
			rs=()
			for pair in "$@"; do
				r=$(awk -v k="$key" '$1 == k {print $2}' "$tmp/${pair%%:*}.tsv")
				l=$(awk -v k="$key" '$1 == k {print $2}' "$tmp/${pair##*:}.tsv")
				if [ -n "$r" ] && [ -n "$l" ] && [ "$(echo "$l > 0" | bc -l)" = 1 ]; then
					rs+=("$(ratio "$r" "$l")")
				fi
			done
			[ "${#rs[@]}" -gt 0 ] || continue
			IFS=: read -r kind t name <<<"$key"
			[ "$kind" = c ] && kind=compute || kind=bandwidth
			printf '%s\n' "${rs[@]}" | sort -g | awk -v head="$kind $t $name" '
				{ v[NR] = $1; if ($1 >= 1) up++ }
				END { med = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
				      printf "%s %d/%d %.3f %.3f %.3f\n", head, up, NR, v[1], med, v[NR] }'
		done
	} | column -t
}

# The ratios of one roof over all pairs. One pair says little on a shared
# host whose neighbours move a roof by 10 to 40% from one minute to the
# next: likwid-bench's two passes of a round, run back to back, are that
# host's noise floor, measured in the same run. A pair below 1 by less
# than likwid-bench differs from itself says nothing of either tool.
against=() selves=()
for p in "${pairs[@]}"; do against+=("p$p:l$p"); done
for r in $(seq 1 "$rounds"); do selves+=("l${r}a:l${r}b"); done
echo
echo "per roof over the ${#pairs[@]} pairs (rprof / likwid-bench): pairs at or above 1, the lowest ratio, the median and the highest"
spread "${against[@]}"
if [ "${LIKWID:-1}" != 0 ]; then
	echo
	echo "likwid-bench against itself over the $rounds round(s) (its first pass / its second, run back to back): the host's noise floor"
	spread "${selves[@]}"
fi

echo
echo "dgemm (GFLOP/s): rprof roof / best cblas_dgemm of a C loop over seed 000's 96 shapes, want >= 1"
if [ -s "$tmp/dgemm.out" ]; then
	read -r cg mg mn mm mk again at <"$tmp/dgemm.out"
	printf 'threads %s: rprof %.2f (%s, median of its samples; the run just before the loop)\n' "$rt" "$rg" "$(jq -r '.dgemm | "\(.library) \(.corename) n=\(.n) m=\(.m) k=\(.k)"' "$tmp/$last.json")"
	printf '  C loop, best single call of 288: %.2f, ratio %s\n' "$cg" "$(ratio "$rg" "$cg")"
	printf '  C loop, best median of 3 calls (n=%s m=%s k=%s): %.2f, ratio %s\n' "$mn" "$mm" "$mk" "$mg" "$(ratio "$rg" "$mg")"
	printf '  that shape timed again, median of 9 calls: %.2f, ratio %s\n' "$again" "$(ratio "$rg" "$again")"
	printf '  rprof'"'"'s shape in the C loop, median of 9 calls: %.2f\n' "$at"
else
	echo "skipped: $dgemm_skip"
fi

if [ "$fixed" -gt 0 ]; then
	echo
	echo "early stopping vs --fixed $fixed --invocations $fixed_inv (1 thread): want >= 20x faster, roofs within 2%"
	t0=$(now)
	"$tmp/rprof" roofs --threads 1 -o "$tmp/es.json" "$@" 2>/dev/null
	t1=$(now)
	"$tmp/rprof" roofs --threads 1 --fixed "$fixed" --invocations "$fixed_inv" -o "$tmp/fixed.json" "$@" 2>/dev/null
	t2=$(now)
	es=$(secs "$t0" "$t1") fx=$(secs "$t1" "$t2")
	echo "early stopping $es s, fixed $fx s: speedup $(ratio "$fx" "$es")x"
	jq -r -n --slurpfile e "$tmp/es.json" --slurpfile f "$tmp/fixed.json" '
		[($e[0].compute[] | {k: "\(.name)", v: .gflops}), ($e[0].bandwidth[] | {k: .level, v: .gbytes_per_s}), {k: "dgemm", v: ($e[0].dgemm.gflops // null)}] as $es |
		[($f[0].compute[] | {k: "\(.name)", v: .gflops}), ($f[0].bandwidth[] | {k: .level, v: .gbytes_per_s}), {k: "dgemm", v: ($f[0].dgemm.gflops // null)}] as $fs |
		$es[] | . as $x | ($fs[] | select(.k == $x.k) | .v) as $fv | select($x.v != null and $fv != null) |
		"\($x.k)\t\($x.v * 100 | round / 100)\t\($fv * 100 | round / 100)\t\((($x.v - $fv) / $fv * 1000 | round) / 10)%"' |
		column -t -N "roof,early,fixed,difference"
fi
if [ "${DRAM_ROUNDS:-0}" -gt 0 ]; then
	echo
	echo "DRAM ceiling, early stopping against --fixed 200 in $DRAM_ROUNDS paired rounds (1 thread): want the mean difference within 2%"
	go test ./roofs -run '^$' -bench DRAMEarlyVsFixed -benchtime "${DRAM_ROUNDS}x" | grep '^Benchmark' | tr '\t' '\n' | sed -n 's/^ *\([-0-9.]*\) \([a-z].*\)$/  \2: \1/p'
fi
echo; echo "# load average at the end: $(cut -d" " -f1-3 /proc/loadavg)"
