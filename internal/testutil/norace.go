//go:build !race

package testutil

const raceDetector = false
