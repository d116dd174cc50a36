//go:build !race

package loader

// raceScale multiplies the time bounds of the tests: 1 without the race
// detector.
const raceScale = 1
