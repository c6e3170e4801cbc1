//go:build race

package secrets

// raceEnabled reports whether the race detector is on.
const raceEnabled = true
