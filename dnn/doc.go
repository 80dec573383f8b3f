// Package dnn reads oneDNN's verbose trace and models the work and traffic
// of the primitives it records.
//
// oneDNN prints one comma-separated line per primitive execution on stdout
// when ONEDNN_VERBOSE=1 (DNNL_VERBOSE=1 in 1.x and 2.x). The package parses
// the three line grammars in use since oneDNN 1.x (see docs/dnn.md):
//
//	2.x, 3.0-3.2   onednn_verbose,[timestamp,]exec,cpu,kind,impl,prop,mds,attrs,aux,problem,ms
//	3.3-3.5        onednn_verbose,[timestamp,]primitive,exec,cpu,...
//	3.6 and later  onednn_verbose,v1,[timestamp,]primitive,exec,cpu,...
//
// with memory descriptors "src_f32::blocked:aBcd16b:f0" (2.x),
// "src_f32::blocked:aBcd16b::f0" (3.x, a strides field) and
// "src:f32::blocked:aBcd16b::f0" (v1). The problem descriptor is benchdnn's
// (mb2_ic64oc64_ih56oh56kh3sh1dh0ph1_iw56ow56kw3sw1dw0pw1,
// 128x1024:1024x1024:128x1024, 2x64x112x112).
//
// Model gives each execution an analytic work W (FLOPs, an FMA counted as
// two) and a compulsory traffic Q (bytes of every tensor read or written
// once, at its data type and with the padding of its blocked layout), with
// flags where a formula is approximate or missing. Group sums executions of
// one primitive. Split separates verbose lines from a program's own output.
//
// Everything here is plain data and pure functions: the package never runs a
// program, prints or reads the environment.
package dnn
