package objstore

import (
	"fmt"
	"time"

	"github.com/cairnstore/cairn/objstore/meta"
)

// Object lock, as S3 defines it, is enforced here rather than in a face,
// so that no path removes a locked version: a DELETE by version id, the
// overwrite of a null version, a DELETE in an unversioned bucket and the
// lifecycle's expiration all go through checkRemovable.
//
// Invariants:
//   - A version is locked while its retention has a mode and its Until is
//     after now, or while it has a legal hold.
//   - A locked version is never removed from the index; only a delete
//     marker can hide it. GOVERNANCE retention gives way to a caller
//     that says it may bypass it (DeleteOptions.BypassGovernance);
//     COMPLIANCE retention and legal holds give way to nobody.
//   - An active retention is only lengthened, unless it is GOVERNANCE and
//     the caller bypasses it (checkRetentionChange).
//   - Retention and legal holds are set only in buckets with object lock,
//     whose versioning is Enabled and stays so (SetVersioning refuses
//     Suspended).

// checkRemovable fails with ErrObjectLocked when v may not be removed at
// now.
func checkRemovable(v *meta.Version, key string, now time.Time, bypassGovernance bool) error {
	if v.DeleteMarker {
		return nil
	}
	a := v.Attrs
	if a.LegalHold {
		return fmt.Errorf("%w: %s %s has a legal hold", ErrObjectLocked, key, v.VersionID)
	}
	if !a.Retention.Locked(now) {
		return nil
	}
	if a.Retention.Mode == RetentionGovernance && bypassGovernance {
		return nil
	}
	return fmt.Errorf("%w: %s %s is retained in %s mode until %s", ErrObjectLocked,
		key, v.VersionID, a.Retention.Mode, a.Retention.Until.UTC().Format(time.RFC3339))
}

// validRetention checks a retention's shape: no mode and no date, or a
// known mode and a date.
func validRetention(r Retention) error {
	switch r.Mode {
	case "":
		if !r.Until.IsZero() {
			return fmt.Errorf("%w: retention date without a mode", ErrInvalidArgument)
		}
	case RetentionGovernance, RetentionCompliance:
		if r.Until.IsZero() {
			return fmt.Errorf("%w: retention mode %s without a date", ErrInvalidArgument, r.Mode)
		}
	default:
		return fmt.Errorf("%w: retention mode %q", ErrInvalidArgument, r.Mode)
	}
	return nil
}

// checkRetentionChange fails with ErrObjectLocked when replacing cur by
// next at now would change an active retention other than by lengthening
// it in the same mode: remove it, bring its date forward or change its
// mode. A GOVERNANCE retention may be changed so with bypassGovernance
// (S3 asks for the bypass even to turn GOVERNANCE into COMPLIANCE); a
// COMPLIANCE one never.
func checkRetentionChange(cur, next Retention, now time.Time, bypassGovernance bool) error {
	if !cur.Locked(now) || (cur.Mode == next.Mode && cur.Until.Equal(next.Until)) {
		return nil
	}
	if next.Mode == cur.Mode && !next.Until.Before(cur.Until) {
		return nil
	}
	if cur.Mode == RetentionGovernance && bypassGovernance {
		return nil
	}
	return fmt.Errorf("%w: the %s retention until %s cannot be shortened or removed", ErrObjectLocked,
		cur.Mode, cur.Until.UTC().Format(time.RFC3339))
}
