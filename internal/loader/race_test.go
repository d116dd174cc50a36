//go:build race

package loader

// raceScale multiplies the time bounds of the tests: the race detector
// slows the code it instruments five to ten times.
const raceScale = 10
