//go:build race

package loadgen

// raceEnabled: the race detector makes more values escape to the heap,
// so allocation counts do not hold under it.
const raceEnabled = true
