package testobj

import "time"

// Epoch is the tests' one clock, 2026-01-01T00:00:00Z: the base of every
// start time and of Request.Now in the tests (a table's clock is Epoch or
// a fixed offset from it), and the instant internal/synth's shapes start
// at (synth.Base). Nothing assigns it.
var Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
