// Package roofline defines the documents rprof writes and reads (a measured
// point, a set of points, the machine's roofs) and the roofline model that
// places a point under the roofs.
//
// Everything here is plain data and pure functions: no package in rprof reads
// or writes these documents any other way, so the JSON schema is defined once.
// The schemas are documented in docs/schema-point.md and
// docs/schema-roofs.md.
package roofline
