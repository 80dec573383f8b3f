#!/usr/bin/env bash
# Runs rprof's test suite on a fresh Debian machine with Go: installs the
# Debian packages the tests exercise for real (when root and missing), then
# runs every test. Extra arguments go to `go test` (e.g. -run, -v).
set -euo pipefail
cd "$(dirname "$0")/.."

# Packages the tests use for real. Tests that need one skip with the reason
# when it is absent, so a machine without root still runs the rest.
apt_pkgs=(
	libopenblas0-pthread libopenblas-dev libblis4-openmp likwid chromium linux-perf
	qemu-user                           # --count emulate
	libdnnl2 libdnnl-dev python3-torch  # rprof dnn
	openmpi-bin libopenmpi-dev mpich libmpich-dev slurm-wlm munge iproute2  # MPI and Slurm
)

missing=()
for p in "${apt_pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})) && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
	echo "installing test packages: ${missing[*]}" >&2
	export DEBIAN_FRONTEND=noninteractive
	# A failed install is not a failed test run: the tests that need a
	# package skip with the reason.
	{ apt-get update -qq >/dev/null &&
		apt-get install -y -qq -o DPkg::Lock::Timeout=300 --no-install-recommends "${missing[@]}" >/dev/null; } ||
		echo "warning: could not install ${missing[*]}; the tests that need them will skip" >&2
fi

go test -count=1 "$@" ./...

# The document readers and what draws documents, fuzzed briefly: 10 s a
# target, without minimising what fails (the failure is printed whole).
for target in roofline:FuzzReadPoints roofline:FuzzReadRoofs internal/chart:FuzzRender internal/report:FuzzReport; do
	go test -run '^$' -fuzz "^${target#*:}\$" -fuzztime 10s -fuzzminimizetime 0 "./${target%%:*}"
done
