//go:build !amd64 && !arm64

package regions

// Register offsets are known for amd64 and arm64 only: elsewhere Attach
// refuses.
const (
	regsKnown = false
	regsSP    = 0
	regsArg0  = 0
	retPop    = 0
)
