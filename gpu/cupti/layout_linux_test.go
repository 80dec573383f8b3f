package cupti

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// headersEnv names the directory holding CUPTI 11.8's headers
// (cupti_activity.h), which scripts/test.sh unpacks from Debian's
// libcupti-dev.
const headersEnv = "RPROF_CUPTI_HEADERS"

// cudaStub declares the few CUDA driver types CUPTI's headers use, so that
// they compile without the CUDA toolkit's cuda.h: only their names and
// pointer sizes matter to the records' layout.
const cudaStub = `#ifndef RPROF_CUDA_STUB
#define RPROF_CUDA_STUB
#define CUDA_VERSION 11080
typedef int CUdevice;
typedef int CUresult;
typedef int CUdevice_attribute;
typedef int CUfunction_attribute;
typedef int CUgraphNodeType;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphNode_st *CUgraphNode;
typedef struct CUgraphExec_st *CUgraphExec;
typedef struct CUfunc_st *CUfunction;
typedef struct CUmod_st *CUmodule;
typedef struct CUaccessPolicyWindow_st CUaccessPolicyWindow;
typedef struct { char bytes[16]; } CUuuid;
#endif
`

// layoutCheck asserts, at compile time, that every kernel record version
// of the headers has the fields inject.c reads where layout.h says, and
// that the headers are the CUPTI API version the library calls checked.
const layoutCheck = `#include <stddef.h>
#include <cupti_activity.h>
#include <cupti_version.h>
#include "layout.h"
#define CHECK(T) \
	_Static_assert(offsetof(T, kind) == OFF_KIND, #T ".kind"); \
	_Static_assert(offsetof(T, start) == OFF_START, #T ".start"); \
	_Static_assert(offsetof(T, end) == OFF_END, #T ".end"); \
	_Static_assert(offsetof(T, deviceId) == OFF_DEVICE, #T ".deviceId"); \
	_Static_assert(offsetof(T, contextId) == OFF_CONTEXT, #T ".contextId"); \
	_Static_assert(offsetof(T, streamId) == OFF_STREAM, #T ".streamId"); \
	_Static_assert(offsetof(T, gridX) == OFF_GRID, #T ".gridX"); \
	_Static_assert(offsetof(T, gridZ) == OFF_GRID + 8, #T ".gridZ"); \
	_Static_assert(offsetof(T, blockX) == OFF_BLOCK, #T ".blockX"); \
	_Static_assert(offsetof(T, blockZ) == OFF_BLOCK + 8, #T ".blockZ"); \
	_Static_assert(offsetof(T, correlationId) == OFF_CORRELATION, #T ".correlationId"); \
	_Static_assert(offsetof(T, name) == OFF_NAME, #T ".name");
CHECK(CUpti_ActivityKernel4)
CHECK(CUpti_ActivityKernel5)
CHECK(CUpti_ActivityKernel6)
CHECK(CUpti_ActivityKernel7)
CHECK(CUpti_ActivityKernel8)
_Static_assert(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL == 10, "the kind inject.c enables");
_Static_assert(CUPTI_API_VERSION == CHECKED_VERSION, "the headers are the version checked");
`

// TestKernelRecordLayoutIsCUPTIs compiles layout.h's offsets against
// NVIDIA's CUPTI 11.8 headers: a wrong offset, or headers of another
// version, fails to compile.
func TestKernelRecordLayoutIsCUPTIs(t *testing.T) {
	compileAgainstHeaders(t, layoutCheck, "-DCHECKED_VERSION="+strconv.Itoa(CheckedVersion))
}

// compileAgainstHeaders compiles check, C that includes CUPTI's headers
// and inject's, or skips t where the headers or gcc are absent.
func compileAgainstHeaders(t *testing.T, check string, flags ...string) {
	t.Helper()
	headers := os.Getenv(headersEnv)
	if headers == "" {
		t.Skipf("unmet requirement: $%s names no CUPTI 11.8 headers (scripts/test.sh unpacks Debian's libcupti-dev)", headersEnv)
	}
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not found")
	}
	dir := t.TempDir()
	inject, err := filepath.Abs("inject")
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"stub/cuda.h": cudaStub, "stub/builtin_types.h": "", "check.c": check} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	args := append([]string{"-std=gnu11", "-fsyntax-only"}, flags...)
	args = append(args, "-I", filepath.Join(dir, "stub"), "-I", headers, "-I", inject, filepath.Join(dir, "check.c"))
	if out, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
		t.Fatalf("inject's headers against %s: %v\n%s", headers, err, out)
	}
}
