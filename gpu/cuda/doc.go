// Package cuda is the part of the CUDA driver API that rprof uses, bound
// without cgo: libcuda.so.1 is loaded at run time through purego, with the
// _v2 symbols where the API has them.
//
// Calls go through the Driver interface, in C's shape (each returns its
// CUresult), so that a fake driver (package cudatest) can stand in for the
// library in tests. A Session owns one device's context and runs every
// call on one locked OS thread, since a CUDA context is current per
// thread. Absence of the library is ErrNoDriver, of a device ErrNoDevice,
// an index past the last device a *DeviceRangeError, and a PTX the JIT
// refuses a *JITError carrying the JIT's log.
package cuda
