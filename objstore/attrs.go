package objstore

import (
	"context"
	"fmt"
	"maps"

	"github.com/cairnstore/cairn/objstore/meta"
)

// SetAttrs changes the attributes of one version in place, without making
// a new version: versionID empty means the current version. fn gets the
// version as it is and the attributes to edit (a copy: its Sys map may be
// changed freely); an error from it changes nothing and is returned as is.
// A delete marker has no attributes to set (ErrDeleteMarker), as in S3,
// where a delete marker cannot carry tags, ACLs or a lock.
func (s *Store) SetAttrs(ctx context.Context, bucket, key, versionID string, fn func(cur ObjectInfo, a *Attrs) error) (ObjectInfo, error) {
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
