package strong

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/cairnstore/cairn/catalog"
)

// Errors of the durable-strong backing, besides catalog.ErrNotFound and
// catalog.ErrConflict.
var (
	// ErrSnapshotInvalid: a warehouse's snapshot failed decode validation
	// (bad magic, checksum, encoding or a broken invariant). The warehouse
	// is not served until a valid snapshot replaces it.
	ErrSnapshotInvalid = fmt.Errorf("strong: snapshot invalid: %w", catalog.ErrUnavailable)
	// ErrBelowHighWater: a snapshot of an older format than this process
	// has already read or written for the warehouse (always wrapped
	// together with ErrSnapshotInvalid).
	ErrBelowHighWater = errors.New("strong: snapshot format below the process high-water mark")
	// ErrSnapshotMissing: a snapshot this process has seen is gone.
	ErrSnapshotMissing = fmt.Errorf("strong: snapshot vanished: %w", catalog.ErrUnavailable)
	// ErrQuarantined: the warehouse holds table/view identifier collisions
	// and is in cleanup-only mode; the read touches a colliding identifier,
	// or the write does not shrink the collision set.
	ErrQuarantined = fmt.Errorf("strong: warehouse quarantined: %w", catalog.ErrQuarantined)
	// ErrTooLarge: the encoded snapshot would exceed MaxSnapshot.
	ErrTooLarge = errors.New("strong: snapshot too large")
)

// MaxSnapshot bounds an encoded snapshot, read or written.
const MaxSnapshot = 64 << 20

// Options configure a Backing. Only cmd/ reads the environment: it turns
// CAIRN_TABLE_CATALOG_STRONG_SNAPSHOT_V2 and
// CAIRN_TABLE_CATALOG_STRONG_SNAPSHOT_V2_FLEET_CONFIRMED into the two
// gates with ParseGate.
type Options struct {
	// SnapshotV2 and SnapshotV2FleetConfirmed: snapshots are written in
	// format 2 only when both are true; one alone changes nothing.
	SnapshotV2               bool
	SnapshotV2FleetConfirmed bool
	// Hooks are fault-injection points for tests; nil in production.
	Hooks Hooks
}

// Hooks are failpoints around the snapshot publish.
type Hooks struct {
	// BeforePublish runs before each snapshot Put; an error fails the
	// publish without writing (as a store error would).
	BeforePublish func(warehouse string) error
	// AfterPublish runs after a Put that landed; an error makes the
	// publish look ambiguous (the answer was lost).
	AfterPublish func(warehouse string) error
}

// configuredFormat is the format the gates ask for.
func (o Options) configuredFormat() int {
	if o.SnapshotV2 && o.SnapshotV2FleetConfirmed {
		return 2
	}
	return 1
}

// ParseGate parses a gate's environment value leniently: surrounding space
// is ignored, strconv.ParseBool's words are accepted, and anything else
// (empty included) is false. valid is false for a non-empty value that
// does not parse, so the caller can log it once.
func ParseGate(s string) (v, valid bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return false, true
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, false
	}
	return b, true
}
