#!/bin/sh
# Builds rprof's CUPTI injection library into this directory. The output is
# committed (rprof embeds it, so users need no compiler and no CUDA
# toolkit); TestInjectionIsRebuiltFromItsSources checks that it matches
# this source. Reproducible: fixed flags, no build ID, source paths mapped
# to ".".
set -eu
cd "$(dirname "$0")"
CC=${CC:-gcc}
$CC -std=gnu11 -O2 -g0 -fPIC -shared -fvisibility=hidden -Wall -Wextra -Werror \
	-ffile-prefix-map="$PWD"=. -Wl,--build-id=none -Wl,-z,noexecstack \
	-o librprof-cupti.so inject.c profiler.c -ldl -lpthread
