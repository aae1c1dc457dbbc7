package objstore

import (
	"context"
	"time"

	"github.com/cairnstore/cairn/objstore/meta"
)

// Delete removes bucket/key as S3 does. Without a version id: in an
// unversioned bucket the key's data is released; with versioning enabled a
// delete marker becomes the newest version; suspended, a null delete
// marker replaces the null version. Deleting an absent key succeeds. With
// opt.VersionID that version is removed for good (ErrNoSuchVersion when
// unknown) and the next newest becomes current. A version under object
// lock is never removed (ErrObjectLocked; see lock.go): GOVERNANCE
// retention gives way to opt.BypassGovernance, nothing else does.
func (s *Store) Delete(ctx context.Context, bucket, key string, opt DeleteOptions) (DeleteResult, error) {
	if err := s.pending.waitKey(ctx, bucket, key); err != nil {
		return DeleteResult{}, err
	}
	if err := s.checkOpen(); err != nil {
		return DeleteResult{}, err
	}
	if err := ValidateKey(key); err != nil {
		return DeleteResult{}, err
	}
	var res DeleteResult
	err := s.commit(ctx, nil, 0, func(tx meta.Tx) error {
		res = DeleteResult{}
		b, err := getBucket(tx, bucket)
		if err != nil {
			return err
		}
		if opt.IfMatch != "" {
			cur, err := currentVersion(tx, bucket, key)
			if err != nil {
				return err
			}
			if err := checkConds(cur, key, opt.IfMatch, ""); err != nil {
				return err
			}
		}
		if opt.VersionID != "" {
			v, err := findVersion(tx, bucket, key, opt.VersionID)
			if err != nil {
				return err
			}
			if err := checkRemovable(v, key, time.Now(), opt.BypassGovernance); err != nil {
				return err
			}
			res = DeleteResult{VersionID: v.VersionID, DeleteMarker: v.DeleteMarker}
			return removeVersion(tx, bucket, key, v)
		}
		r, err := deleteCurrent(tx, b, key)
		res = r
		return err
	})
	if err != nil {
		return DeleteResult{}, err
	}
	s.notify(Event{Op: OpDelete, Bucket: bucket, Key: key})
	return res, nil
}

// deleteCurrent is Delete without a version id, inside a transaction.
func deleteCurrent(tx meta.Tx, b *meta.Bucket, key string) (DeleteResult, error) {
	if b.Versioning == "" {
		vs, err := keyVersions(tx, b.Name, key)
		if err != nil {
			return DeleteResult{}, err
		}
		now := time.Now()
		for i := range vs {
			if err := checkRemovable(&vs[i], key, now, false); err != nil {
				return DeleteResult{}, err
			}
		}
		for i := range vs {
			if err := dropVersionRefs(tx, &vs[i]); err != nil {
				return DeleteResult{}, err
			}
			if err := tx.Delete(meta.Versions, meta.VersionKey(b.Name, key, vs[i].Seq)); err != nil {
				return DeleteResult{}, err
			}
		}
		return DeleteResult{}, tx.Delete(meta.Objects, meta.ObjectKey(b.Name, key))
	}
	m := &meta.Version{DeleteMarker: true, ModTime: time.Now().UTC()}
	if err := installVersion(tx, b, key, m); err != nil {
		return DeleteResult{}, err
	}
	return DeleteResult{VersionID: m.VersionID, DeleteMarker: true}, nil
}
