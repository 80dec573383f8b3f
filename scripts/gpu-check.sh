#!/usr/bin/env bash
# Checks rprof's GPU roofs on an NVIDIA H100 or H200 in under 5 minutes:
# measures the roofs (rprof roofs --gpu), prints measured against
# theoretical for FMA fp64 and fp32 (rprof's peak at the recorded clock,
# and the datasheet of the SKU told from the SM count and memory clock)
# and DRAM against the datasheet's HBM bandwidth, with the targets (FMA at
# least 90% of theoretical at the recorded clock, HBM at least 85% of the
# datasheet), then which counter tier works here (docs/gpu.md):
#   a  W and Q per kernel (rprof run --gpu, CUPTI's range profiler) and
#   c  kernel times only (rprof run --gpu, CUPTI's activity API), both run
#      on rprof roofs --gpu --quick's own kernels: a kernel's point has W
#      and Q (tier a) or the gpu-times-only flag with the reason (tier c);
#   b  Nsight Compute's report (ncu, then rprof import ncu)
#
# usage: scripts/gpu-check.sh
# env:
#   RPROF   an rprof binary (default: built here with go)
#   QUICK=1 rprof roofs --gpu --quick (default: the full search)
#   DEVICE  the GPU's index (default 0)
#   KEEP    a directory that keeps the document, table and ncu output
#   DOC     an existing roofs document to compare instead of measuring
#           (the counter tiers are still probed)
# Needs jq or python3 for the comparison (else prints rprof's table only).
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out=${KEEP:-$work}
mkdir -p "$out"
if [ -z "${RPROF:-}" ]; then
	command -v go >/dev/null || { echo "gpu-check: no go to build rprof: give RPROF=path/to/rprof" >&2; exit 1; }
	go build -o "$work/rprof" ./cmd/rprof
	RPROF=$work/rprof
fi
device=${DEVICE:-0}
mode=()
[ "${QUICK:-0}" = 1 ] && mode=(--quick)

if [ -n "${DOC:-}" ]; then
	cp "$DOC" "$out/roofs.json"
else
	echo "== rprof roofs --gpu --device $device ${mode[*]} ($(date -u +%H:%M:%S) UTC)"
	start=$(date +%s)
	if ! timeout 240 "$RPROF" roofs --gpu --device "$device" "${mode[@]}" -o "$out/roofs.json" 2> >(tee "$out/roofs.txt" >&2); then
		echo "gpu-check: rprof roofs --gpu failed (above)" >&2
		exit 1
	fi
	echo "== measured in $(($(date +%s) - start)) s"
fi

# figures prints "key value" lines from the document: the device, then
# each FMA and DRAM roof with its theoretical peak.
figures() {
	if command -v jq >/dev/null; then
		jq -r --argjson d "$device" '.gpus[] | select(.device.index == $d) |
			"sms \(.device.sms)", "mem_mhz \(.device.mem_clock_mhz)", "sm_mhz \(.device.sm_clock_mhz)",
			"memory_bytes \(.device.memory_bytes)", "name \(.device.name)",
			(.compute[] | "\(.precision) \(.gflops) \(.theoretical_gflops // 0)"),
			(.memory[] | select(.level == "DRAM") | "dram \(.gbytes_per_s) \(.theoretical_gbytes_per_s // 0)")' "$1"
	elif command -v python3 >/dev/null; then
		python3 - "$1" "$device" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
for g in doc.get("gpus", []):
    if g["device"]["index"] != int(sys.argv[2]):
        continue
    d = g["device"]
    for k in ("sms", "mem_clock_mhz", "sm_clock_mhz", "memory_bytes", "name"):
        print({"mem_clock_mhz": "mem_mhz", "sm_clock_mhz": "sm_mhz"}.get(k, k), d[k])
    for c in g["compute"]:
        print(c["precision"], c["gflops"], c.get("theoretical_gflops", 0))
    for m in g["memory"]:
        if m["level"] == "DRAM":
            print("dram", m["gbytes_per_s"], m.get("theoretical_gbytes_per_s", 0))
PY
	else
		return 1
	fi
}

if ! figures "$out/roofs.json" >"$work/figures"; then
	echo "gpu-check: no jq or python3: the comparison is left out (rprof's table above has the roofs against their theoretical peaks)"
else
	get() { awk -v k="$1" -v f="${2:-2}" '$1 == k { print $f; exit }' "$work/figures"; }
	sms=$(get sms) mem=$(get mem_mhz) smclk=$(get sm_mhz)
	# The SKU from the SM count and the memory clock (the datasheets'
	# figures: TFLOP/s vector FP64 and FP32, TB/s memory).
	sku="unknown" ds64="" ds32="" dshbm=""
	if [ "$sms" = 132 ] && awk -v m="$mem" 'BEGIN { exit !(m >= 3000) }'; then
		sku="H200 (HBM3e)" ds64=34 ds32=67 dshbm=4.8
	elif [ "$sms" = 132 ]; then
		sku="H100 SXM (HBM3)" ds64=34 ds32=67 dshbm=3.35
	elif [ "$sms" = 114 ]; then
		sku="H100 PCIe (HBM2e)" ds64=26 ds32=51 dshbm=2.0
	fi
	name=$(awk '$1 == "name" { $1 = ""; sub(/^ /, ""); print; exit }' "$work/figures")
	echo "== $name: $sms SMs, SM clock $smclk MHz, memory clock $mem MHz (driver's peak clocks): $sku"
	printf '%-6s %12s %14s %8s %12s %8s %s\n' roof measured "rprof peak" "of it" datasheet "of it" target
	row() { # name measured peak datasheet target-share target-of
		awk -v n="$1" -v v="$2" -v p="$3" -v d="$4" -v t="$5" -v of="$6" 'BEGIN {
			sp = p > 0 ? sprintf("%.1f%%", 100 * v / p) : "-"
			sd = d > 0 ? sprintf("%.1f%%", 100 * v / d) : "-"
			share = (of == "peak" ? (p > 0 ? v / p : -1) : (d > 0 ? v / d : -1))
			verdict = share < 0 ? "no reference" : (share >= t ? "met" : "below")
			printf "%-6s %12.0f %14s %8s %12s %8s %.0f%% of %s: %s\n", n, v, (p > 0 ? sprintf("%.0f", p) : "-"), sp, (d > 0 ? sprintf("%.0f", d) : "-"), sd, 100 * t, of, verdict }'
	}
	row fp64 "$(get fp64)" "$(get fp64 3)" "${ds64:+$((ds64 * 1000))}" 0.90 peak
	row fp32 "$(get fp32)" "$(get fp32 3)" "${ds32:+$((ds32 * 1000))}" 0.90 peak
	row DRAM "$(get dram)" "$(get dram 3)" "$(awk -v d="$dshbm" 'BEGIN { if (d != "") print d * 1000 }')" 0.85 datasheet
	echo "(GFLOP/s and GB/s; rprof's peak is SMs x FMA per SM per clock x 2 at the recorded clock, DRAM's 2 x memory clock x bus width)"
fi

echo "== counter tiers"
"$RPROF" doctor 2>/dev/null | grep -E '^(GPU|CUPTI)' || true
# rprof run --gpu records the kernels of a quick roofs run: tier c works
# when it lists them, tier a when their points have W and Q.
if timeout 120 "$RPROF" run --gpu --json "$out/kernels.json" -- "$RPROF" roofs --gpu --quick --device "$device" \
	-o "$work/cupti-roofs.json" >/dev/null 2>"$out/run-gpu.err"; then
	echo "c (rprof run --gpu, kernel times): works: $(grep -E '^[0-9]+ kernels' "$out/run-gpu.err")"
	if command -v python3 >/dev/null; then
		python3 - "$out/kernels.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
points = doc.get("points", [doc])
why = [f.get("message", "") for p in points for f in p.get("flags") or [] if f.get("code") == "gpu-times-only"]
counted = [p for p in points if p.get("work_flops") is not None]
if counted:
    print(f"a (rprof run --gpu, W and Q): works: {len(counted)} of {len(points)} kernels counted")
else:
    print("a (rprof run --gpu, W and Q): does not work here: " + (why[0] if why else "no kernel point has W"))
PY
	else
		echo "a (rprof run --gpu, W and Q): see $out/kernels.json (no python3 to read it)"
	fi
else
	echo "c (rprof run --gpu, kernel times): does not work here: $(grep -E '^rprof run:' "$out/run-gpu.err" | head -1)"
	echo "a (rprof run --gpu, W and Q): does not work here (tier c does not)"
fi
if command -v ncu >/dev/null; then
	# Profile one launch of rprof's own kernels: the counters are readable
	# when ncu reports a DRAM byte count, not ERR_NVGPUCTRPERM or n/a.
	if timeout 120 ncu --csv --page raw --launch-count 1 --metrics gpu__time_duration.sum,dram__bytes.sum \
		"$RPROF" roofs --gpu --quick --device "$device" -o "$work/ncu-roofs.json" >"$out/ncu.csv" 2>"$out/ncu.err" &&
		grep -q '"dram__bytes.sum"' "$out/ncu.csv" && ! grep -q '"n/a"' "$out/ncu.csv"; then
		echo "b (ncu, rprof import ncu): works"
	else
		echo "b (ncu, rprof import ncu): does not work here: $(grep -hoE 'ERR_NVGPUCTRPERM|[^ ]*[Ee]rror[^.]*' "$out/ncu.err" "$out/ncu.csv" 2>/dev/null | head -1)"
	fi
else
	echo "b (ncu, rprof import ncu): ncu not installed"
fi
