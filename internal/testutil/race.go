//go:build race

package testutil

// raceDetector says the race detector is built in: it multiplies the memory
// and time of what runs under it.
const raceDetector = true
