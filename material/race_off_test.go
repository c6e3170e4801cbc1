//go:build !race

package material

// raceEnabled reports whether the race detector is on; large tests shrink.
const raceEnabled = false
