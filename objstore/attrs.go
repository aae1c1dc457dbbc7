package objstore

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/cairnstore/cairn/objstore/meta"
)

// SetAttrs changes the attributes of one version in place, without making
// a new version: versionID empty means the current version. fn gets the
// version as it is and the attributes to edit (a copy: its Sys map may be
// changed freely); an error from it changes nothing and is returned as is.
// A delete marker has no attributes to set (ErrDeleteMarker), as in S3,
// where a delete marker cannot carry tags, ACLs or a lock. The object
// lock holds (lock.go): fn may set a retention or a legal hold only in a
// bucket with object lock (ErrInvalidBucketState), and may not weaken an
// active retention (ErrObjectLocked; SetRetention may bypass GOVERNANCE).
func (s *Store) SetAttrs(ctx context.Context, bucket, key, versionID string, fn func(cur ObjectInfo, a *Attrs) error) (ObjectInfo, error) {
	return s.setAttrs(ctx, bucket, key, versionID, false, fn)
}

// SetRetention sets one version's retention (versionID empty: the current
// version); the zero Retention removes it. Shortening or removing an
// active retention fails with ErrObjectLocked unless it is GOVERNANCE and
// bypassGovernance is set (the caller checked the requester may).
func (s *Store) SetRetention(ctx context.Context, bucket, key, versionID string, r Retention, bypassGovernance bool) (ObjectInfo, error) {
	if err := validRetention(r); err != nil {
		return ObjectInfo{}, err
	}
	r.Until = r.Until.UTC()
	return s.setAttrs(ctx, bucket, key, versionID, bypassGovernance, func(_ ObjectInfo, a *Attrs) error {
		a.Retention = r
		return nil
	})
}

// SetLegalHold puts a legal hold on one version, or lifts it.
func (s *Store) SetLegalHold(ctx context.Context, bucket, key, versionID string, on bool) (ObjectInfo, error) {
	return s.setAttrs(ctx, bucket, key, versionID, false, func(_ ObjectInfo, a *Attrs) error {
		a.LegalHold = on
		return nil
	})
}

func (s *Store) setAttrs(ctx context.Context, bucket, key, versionID string, bypassGovernance bool, fn func(cur ObjectInfo, a *Attrs) error) (ObjectInfo, error) {
	if err := s.pending.waitKey(ctx, bucket, key); err != nil {
		return ObjectInfo{}, err
	}
	if err := s.checkOpen(); err != nil {
		return ObjectInfo{}, err
	}
	var out ObjectInfo
	err := s.commit(ctx, nil, 0, func(tx meta.Tx) error {
		v, latest, err := lookupVersion(tx, bucket, key, versionID)
		if err != nil {
			return err
		}
		if v.DeleteMarker {
			return fmt.Errorf("%w: %s %s", ErrDeleteMarker, key, v.VersionID)
		}
		a := v.Attrs
		a.Sys = maps.Clone(v.Attrs.Sys)
		if err := fn(toInfo(bucket, key, v, latest), &a); err != nil {
			return err
		}
		if err := validRetention(a.Retention); err != nil {
			return err
		}
		if a.Retention != v.Attrs.Retention || a.LegalHold != v.Attrs.LegalHold {
			b, err := getBucket(tx, bucket)
			if err != nil {
				return err
			}
			if !b.ObjectLock && (a.Retention != (Retention{}) || a.LegalHold) {
				return fmt.Errorf("%w: %s has no object lock", ErrInvalidBucketState, bucket)
			}
			if err := checkRetentionChange(v.Attrs.Retention, a.Retention, time.Now(), bypassGovernance); err != nil {
				return err
			}
		}
		if len(a.Sys) == 0 {
			a.Sys = nil
		}
		v.Attrs = a
		rec := meta.Encode(v)
		if err := tx.Put(meta.Versions, meta.VersionKey(bucket, key, v.Seq), rec); err != nil {
			return err
		}
		cur, err := currentVersion(tx, bucket, key)
		if err != nil {
			return err
		}
		if cur != nil && cur.Seq == v.Seq {
			if err := tx.Put(meta.Objects, meta.ObjectKey(bucket, key), rec); err != nil {
				return err
			}
		}
		out = toInfo(bucket, key, v, latest)
		return nil
	})
	if err != nil {
		return ObjectInfo{}, err
	}
	return out, nil
}
