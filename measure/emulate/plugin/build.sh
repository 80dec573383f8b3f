#!/bin/sh
# Builds rprof's QEMU plugin for each plugin API version it supports, into
# this directory: v1 for QEMU 6.0 to 8.2, v2 for 9.0 and later. The output is committed (rprof embeds it, so users need no
# compiler); TestPluginIsRebuilt checks that it matches these sources.
# Reproducible: fixed flags, no build ID, source paths mapped to ".".
set -eu
cd "$(dirname "$0")"
CC=${CC:-gcc}
for api in 1 2; do
	$CC -std=gnu11 -O2 -g0 -fPIC -shared -fvisibility=hidden -Wall -Wextra -Werror \
		-ffile-prefix-map="$PWD"=. -Wl,--build-id=none -Wl,-z,noexecstack \
		-DRP_API_HEADER="\"qemu_api_v$api.h\"" \
		-o "rprof-qemu-v$api.so" plugin.c -lpthread
done
