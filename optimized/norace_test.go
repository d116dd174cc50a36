//go:build !race

package optimized_test

const raceEnabled = false
