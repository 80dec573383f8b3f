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
	libglib2.0-dev ninja-build pkg-config python3-venv libcapstone-dev  # builds QEMU 10 (below)
	libdnnl2 libdnnl-dev python3-torch  # rprof dnn
	curl                                # fetches oneDNN 3.x (below)
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

# oneDNN 3.x for the harness's 3.x binding and the 3.x verbose capture:
# Debian trixie's build (libdnnl3.6, oneDNN 3.7.2) needs glibc >= 2.38 and
# libstdc++ >= 14, newer than this machine's, so it comes with trixie's own
# runtime, unpacked (not installed) into a cache that the tests run under
# trixie's loader. Each package is checked against the SHA256 of trixie's
# index, the index against its signed release file. A complete tree is
# reused without the network; a failed download is not a failed run: the
# tests that need the tree skip with the reason.
onednn3_dir=${RPROF_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rprof-test}/onednn3-trixie
onednn3_pkgs=(libc6 libstdc++6 libgcc-s1 libgomp1 libdnnl3.6 libdnnl-dev)
fetch_onednn3() {
	local mirror=http://deb.debian.org/debian dir=$onednn3_dir
	[ -e "$dir/root/.complete" ] && return 0
	command -v curl >/dev/null || { echo "curl not installed"; return 1; }
	command -v dpkg-deb >/dev/null || { echo "dpkg-deb not installed"; return 1; }
	local keyring=/usr/share/keyrings/debian-archive-keyring.gpg
	command -v gpgv >/dev/null && [ -e "$keyring" ] || { echo "gpgv or $keyring missing"; return 1; }
	mkdir -p "$dir/debs" || return 1
	# The index's SHA256 is in trixie's release file, signed by Debian's
	# archive keys as apt checks it.
	curl -fsS --retry 2 -o "$dir/InRelease" "$mirror/dists/trixie/InRelease" &&
		curl -fsS --retry 2 -o "$dir/Packages.gz" "$mirror/dists/trixie/main/binary-amd64/Packages.gz" ||
		{ echo "cannot download trixie's release file or package index"; return 1; }
	local release index_sum
	release=$(gpgv --keyring "$keyring" --output - "$dir/InRelease" 2>/dev/null) ||
		{ echo "trixie's release file is not signed by a key of $keyring"; return 1; }
	index_sum=$(awk '$3 == "main/binary-amd64/Packages.gz" && length($1) == 64 { print $1 }' <<<"$release")
	echo "$index_sum  $dir/Packages.gz" | sha256sum -c --status ||
		{ echo "trixie's package index does not match its signed release file"; return 1; }
	rm -rf "$dir/root.new" && mkdir -p "$dir/root.new"
	local p entry file sum deb
	for p in "${onednn3_pkgs[@]}"; do
		entry=$(zcat "$dir/Packages.gz" | awk -v p="$p" 'BEGIN { RS = ""; FS = "\n" } { for (i = 1; i <= NF; i++) if ($i == "Package: " p) { print; exit } }')
		file=$(sed -n 's/^Filename: //p' <<<"$entry")
		sum=$(sed -n 's/^SHA256: //p' <<<"$entry")
		[ -n "$file" ] && [ -n "$sum" ] || { echo "$p not in trixie's index"; return 1; }
		deb=$dir/debs/${file##*/}
		if ! echo "$sum  $deb" | sha256sum -c --status 2>/dev/null; then
			curl -fsS --retry 2 -o "$deb" "$mirror/$file" || { echo "cannot download $file"; return 1; }
			echo "$sum  $deb" | sha256sum -c --status || { echo "$file: SHA256 differs from the index"; return 1; }
		fi
		dpkg-deb -x "$deb" "$dir/root.new" || { echo "cannot unpack $deb"; return 1; }
		echo "${file##*/}" >>"$dir/root.new/.complete.tmp"
	done
	mv "$dir/root.new/.complete.tmp" "$dir/root.new/.complete"
	rm -rf "$dir/root" && mv "$dir/root.new" "$dir/root"
}
if why=$(fetch_onednn3); then
	export RPROF_ONEDNN3_ROOT=$onednn3_dir/root
else
	echo "warning: no oneDNN 3.x test tree ($why); the 3.x tests will skip" >&2
fi

# ptxas and cuobjdump for the test that compiles rprof's PTX kernels for
# sm_80 and sm_90 and reads back their SASS (gpu/ptx): Debian 12's
# non-free nvidia-cuda-toolkit 11.8 has both. Only that one package (84 MB)
# is downloaded, by apt from a bookworm non-free source added for it (apt
# checks it against the signed index), and the tools (with nvdisasm, which
# cuobjdump -sass runs from beside it) are unpacked into a cache, not
# installed: the toolkit's dependencies (nvidia-cuda-dev and more,
# gigabytes) are not needed by them, which link only libc. A failed
# download is not a failed run: the test skips with the reason.
cuda_dir=${RPROF_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rprof-test}/cuda-11.8
# fetch_nonfree DIR PACKAGE PATH...: unpacks PATHs of bookworm non-free's
# PACKAGE 11.8 into DIR/root, keeping the .deb in DIR/debs; once done, a
# later run finds DIR/root/.complete and downloads nothing.
fetch_nonfree() {
	local dir=$1 pkg=$2 src=/etc/apt/sources.list.d/rprof-nonfree.sources
	shift 2
	[ -e "$dir/root/.complete" ] && return 0
	[ "$(id -u)" = 0 ] && command -v apt-get >/dev/null || { echo "not root, or no apt-get"; return 1; }
	if ! apt-cache show "$pkg" >/dev/null 2>&1; then
		[ -e "$src" ] || printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: non-free\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' >"$src"
		apt-get update -qq -o DPkg::Lock::Timeout=300 >/dev/null 2>&1 || { echo "apt-get update failed"; return 1; }
	fi
	mkdir -p "$dir/debs" && rm -rf "$dir/root.new" && mkdir -p "$dir/root.new" || return 1
	(cd "$dir/debs" && ls "$pkg"_11.8*.deb >/dev/null 2>&1 ||
		apt-get download -qq -o APT::Sandbox::User=root "$pkg=11.8*" >/dev/null 2>&1) ||
		{ echo "cannot download $pkg 11.8 (bookworm non-free)"; return 1; }
	dpkg-deb --fsys-tarfile "$dir/debs/$pkg"_11.8*.deb | tar -x -C "$dir/root.new" "$@" ||
		{ echo "cannot unpack $* from $pkg"; return 1; }
	touch "$dir/root.new/.complete"
	rm -rf "$dir/root" && mv "$dir/root.new" "$dir/root"
}
fetch_cuda_tools() { fetch_nonfree "$cuda_dir" nvidia-cuda-toolkit ./usr/bin/ptxas ./usr/bin/cuobjdump ./usr/bin/nvdisasm; }
if why=$(fetch_cuda_tools); then
	export RPROF_CUDA_TOOLS=$cuda_dir/root/usr/bin
else
	echo "warning: no ptxas and cuobjdump ($why); the SASS test of the PTX kernels will skip" >&2
fi

# CUPTI 11.8's headers for the test that compiles the CUPTI injection
# library's kernel record offsets against NVIDIA's declarations
# (gpu/cupti): Debian 12's non-free libcupti-dev (8 MB), its headers
# unpacked into a cache, not installed.
cupti_dir=${RPROF_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rprof-test}/cupti-11.8
fetch_cupti_headers() { fetch_nonfree "$cupti_dir" libcupti-dev ./usr/include; }
if why=$(fetch_cupti_headers); then
	export RPROF_CUPTI_HEADERS=$cupti_dir/root/usr/include
else
	echo "warning: no CUPTI headers ($why); the CUPTI record layout test will skip" >&2
fi

# QEMU 10 for the tests of the plugin's v2 build (plugin API 2 and later,
# QEMU 9.0 on): Debian 13's qemu-user is static and cannot load plugins,
# so QEMU is built from Debian 13's source package, for x86_64-linux-user
# with plugins only (348 build steps, about 5 minutes on 2 busy CPUs), into
# a cache later runs reuse. apt downloads the source and the two build
# tools Debian 12's are too old for (meson 1.7, pycotap), checked against
# trixie's signed indexes, from a trixie source added for the download,
# pinned so that nothing installs from it, and removed right after. It is
# built with capstone, since QEMU 10 disassembles x86 (the plugin's disas=)
# only through it; the cache's name says so, as an older cache lacks it. A
# failed build is not a failed run: the v2 tests are left out, and the
# reason is printed.
qemu10_version=1:10.0.13+ds-0+deb13u1
qemu10_dir=${RPROF_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rprof-test}/qemu-10.0.13-capstone
fetch_qemu10() {
	local dir=$qemu10_dir src=/etc/apt/sources.list.d/rprof-trixie.sources pin=/etc/apt/preferences.d/rprof-trixie
	[ -x "$dir/qemu-x86_64" ] && return 0
	[ "$(id -u)" = 0 ] && command -v apt-get >/dev/null || { echo "not root, or no apt-get"; return 1; }
	rm -rf "$dir" && mkdir -p "$dir/src" "$dir/tools/root" || return 1
	printf 'Types: deb deb-src\nURIs: http://deb.debian.org/debian\nSuites: trixie\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' >"$src"
	printf 'Package: *\nPin: release n=trixie\nPin-Priority: 1\n' >"$pin"
	local got=0
	apt-get update -qq -o DPkg::Lock::Timeout=300 >/dev/null 2>&1 &&
		(cd "$dir/src" && apt-get source -qq --download-only -o APT::Sandbox::User=root "qemu=$qemu10_version" >/dev/null 2>&1) &&
		(cd "$dir/tools" && apt-get download -qq -o APT::Sandbox::User=root meson/trixie python3-pycotap/trixie >/dev/null 2>&1) &&
		got=1
	rm -f "$src" "$pin"
	apt-get update -qq -o DPkg::Lock::Timeout=300 >/dev/null 2>&1 || true
	[ "$got" = 1 ] || { echo "cannot download QEMU $qemu10_version's source, meson or pycotap from trixie"; return 1; }
	local d tree=$dir/qemu py=$dir/tools/root/usr/lib/python3/dist-packages
	for d in "$dir"/tools/*.deb; do dpkg-deb -x "$d" "$dir/tools/root" || return 1; done
	mkdir -p "$tree/build" && tar -xJf "$dir"/src/qemu_*.orig.tar.xz -C "$tree" --strip-components=1 ||
		{ echo "cannot unpack QEMU's source"; return 1; }
	# The +ds source has no firmware blobs and no bundled wheels.
	(cd "$tree/build" && export PYTHONPATH=$py PATH=$dir/tools/root/usr/bin:$PATH &&
		../configure --target-list=x86_64-linux-user --enable-plugins --enable-capstone --disable-system --disable-tools \
			--disable-docs --disable-werror --disable-download --disable-install-blobs >"$dir/build.log" 2>&1 &&
		ninja qemu-x86_64 >>"$dir/build.log" 2>&1) || { echo "QEMU's build failed (see $dir/build.log)"; return 1; }
	mv "$tree/build/qemu-x86_64" "$dir/qemu-x86_64" && rm -rf "$tree" "$dir/src"
}
if why=$(fetch_qemu10); then
	qemu10=$qemu10_dir/qemu-x86_64
else
	qemu10=
	echo "warning: no QEMU 10 ($why); the plugin's v2 build will not be tested against a real QEMU" >&2
fi

go test -count=1 "$@" ./...

# The real-QEMU tests again with QEMU 10 and the plugin's v2 build
# (RPROF_QEMU names the emulator), where the build above succeeded.
if [ -n "$qemu10" ]; then
	RPROF_QEMU=$qemu10 go test -count=1 "$@" ./measure/emulate/
	RPROF_QEMU=$qemu10 go test -count=1 "$@" -run 'Emulat' ./measure/
	RPROF_QEMU=$qemu10 go test -count=1 "$@" -run 'Emulat|CIEmulate|Validate' ./cmd/rprof/
fi

# The document readers and what draws documents, fuzzed briefly, without
# minimising what fails (the failure is printed whole). Each target runs a
# count of inputs, about 10 s here (2 vCPUs: 1500 to 2000 inputs a second,
# the report 50), not a duration: Go 1.26's fuzzing coordinator can fail a
# target with "context deadline exceeded" when a -fuzztime duration ends
# while a worker is busy (golang/go#75804, fixed in Go 1.27), as it did in
# this script once.
for target in roofline:FuzzDecodePoints:15000x roofline:FuzzDecodeRoofs:15000x cmd/rprof/internal/chart:FuzzRender:15000x cmd/rprof/internal/report:FuzzReport:500x; do
	pkg=${target%%:*} rest=${target#*:}
	go test -run '^$' -fuzz "^${rest%%:*}\$" -fuzztime "${rest#*:}" -fuzzminimizetime 0 "./$pkg"
done
