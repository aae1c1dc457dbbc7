//go:build !race

package integration

// raceEnabled: this test binary runs without -race, and so do the binaries
// it builds.
const raceEnabled = false
