//go:build race

package integration

// raceEnabled: this test binary runs under -race, so the binaries it builds
// (cairn, the crash workers) are built with -race too (goBuild).
const raceEnabled = true
