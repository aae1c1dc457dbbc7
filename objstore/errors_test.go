package objstore

import (
	"errors"
	"fmt"
	"testing"

	"github.com/cairnstore/cairn/internal/srcscan"
)

// TestSentinelsListed: every package-level `ErrX = errors.New(...)` of
// the package is in sentinels(), so IsStoreError knows it, wrapped or
// not; other errors are not the store's.
func TestSentinelsListed(t *testing.T) {
	found, err := srcscan.Sentinels(".")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, s := range sentinels() {
		listed[s.Error()] = true
	}
	for name, msg := range found {
		if !listed[msg] {
			t.Errorf("%s is not in sentinels(): add it there", name)
		}
	}
	// Re-exported from meta (an index's own sentinel), so not an
	// errors.New of this package.
	reexported := []error{ErrUnavailable, ErrBusy}
	if len(found)+len(reexported) != len(sentinels()) {
		t.Errorf("found %d sentinels in the sources and %d re-exported, sentinels() lists %d", len(found), len(reexported), len(sentinels()))
	}
	for _, s := range sentinels() {
		if !IsStoreError(s) || !IsStoreError(fmt.Errorf("catalog: x: %w", s)) || !IsStoreError(&PartError{Number: 1, Err: s}) {
			t.Errorf("IsStoreError misses %v", s)
		}
	}
	for _, e := range []error{nil, errors.New("no such key"), fmt.Errorf("x: %v", ErrNoSuchKey)} {
		if IsStoreError(e) {
			t.Errorf("IsStoreError(%v) = true, want false", e)
		}
	}
}
