// Package render writes rprof's text tables and summaries: the run summary
// with its footnotes, regions, emulation, the roofs and dnn tables. It takes
// plain data (points, reports, results) and an io.Writer; it names no flags
// and gives no advice, which stays with the command.
package render
