package objstore

import (
	"context"
	"strings"
	"time"

	"github.com/cairnstore/cairn/objstore/meta"
)

// ExpireUploads aborts the incomplete multipart uploads that a bucket
// lifecycle rule (AbortIncompleteMultipartUpload) says have expired at now,
// and returns how many it aborted.
func (s *Store) ExpireUploads(ctx context.Context, now time.Time) (int, error) {
	var expired []meta.Upload
	err := s.forEachRule(ctx, func(tx meta.Tx, b *meta.Bucket, r LifecycleRule) error {
		if r.AbortIncompleteDays <= 0 {
			return nil
		}
		cutoff := now.Add(-time.Duration(r.AbortIncompleteDays) * s.opt.LifecycleDay)
		p := meta.ObjectKey(b.Name, r.Prefix)
		return meta.Scan(tx, meta.Uploads, p, func(_, uraw []byte) error {
			var u meta.Upload
			if err := meta.Decode(uraw, &u); err != nil {
				return err
			}
			if u.Initiated.Before(cutoff) && strings.HasPrefix(u.Key, r.Prefix) {
				expired = append(expired, u)
			}
			return nil
		})
	})
	if err != nil {
		return 0, err
	}
	n := 0
	seen := map[string]bool{}
	for _, u := range expired {
		if seen[u.UploadID] {
			continue
		}
		seen[u.UploadID] = true
		err := s.AbortMultipartUpload(ctx, u.Bucket, u.Key, u.UploadID)
		if err != nil && !errIs(err, ErrNoSuchUpload) {
			return n, err
		}
		if err == nil {
			n++
		}
	}
	return n, nil
}

// forEachRule calls fn for every enabled lifecycle rule of every bucket,
// in one read transaction.
func (s *Store) forEachRule(ctx context.Context, fn func(tx meta.Tx, b *meta.Bucket, r LifecycleRule) error) error {
	return s.idx.View(ctx, func(tx meta.Tx) error {
		return meta.Scan(tx, meta.Buckets, nil, func(_, raw []byte) error {
			var b meta.Bucket
			if err := meta.Decode(raw, &b); err != nil {
				return err
			}
			for _, r := range b.Lifecycle {
				if !r.Enabled {
					continue
				}
				if err := fn(tx, &b, r); err != nil {
					return err
				}
			}
			return nil
		})
	})
}

func (s *Store) runLifecycle(ctx context.Context) {
	t := time.NewTicker(s.opt.LifecycleInterval)
	defer t.Stop()
	for {
		if n, err := s.ExpireUploads(ctx, time.Now()); err != nil && ctx.Err() == nil {
			s.log.Error().Err(err).Msg("lifecycle")
		} else if n > 0 {
			s.log.Info().Int("uploads", n).Msg("aborted expired multipart uploads")
		}
		if n, err := s.ExpireObjects(ctx, time.Now()); err != nil && ctx.Err() == nil {
			s.log.Error().Err(err).Msg("lifecycle")
		} else if n > 0 {
			s.log.Info().Int("objects", n).Msg("expired objects")
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// ExpireObjects applies the Expiration rules of bucket lifecycles: every
// current version under a rule's prefix last modified more than its days
// before now is deleted as a DELETE without version id would (a delete
// marker in a versioned bucket). A locked version is never removed (an
// unversioned key under lock is skipped; lock.go). It returns how many
// keys it expired.
func (s *Store) ExpireObjects(ctx context.Context, now time.Time) (int, error) {
	type target struct {
		bucket, key string
		cutoff      time.Time
	}
	var targets []target
	err := s.forEachRule(ctx, func(tx meta.Tx, b *meta.Bucket, r LifecycleRule) error {
		if r.ExpirationDays <= 0 {
			return nil
		}
		cutoff := now.Add(-time.Duration(r.ExpirationDays) * s.opt.LifecycleDay)
		p := meta.ObjectKey(b.Name, r.Prefix)
		return meta.Scan(tx, meta.Objects, p, func(ok, oraw []byte) error {
			var v meta.Version
			if err := meta.Decode(oraw, &v); err != nil {
				return err
			}
			if v.ModTime.Before(cutoff) {
				_, key, _ := meta.SplitObjectKey(ok)
				targets = append(targets, target{b.Name, key, cutoff})
			}
			return nil
		})
	})
	if err != nil {
		return 0, err
	}
	n := 0
	seen := map[[2]string]bool{}
	for _, t := range targets {
		if seen[[2]string{t.bucket, t.key}] {
			continue
		}
		seen[[2]string{t.bucket, t.key}] = true
		expired, err := s.expireKey(ctx, t.bucket, t.key, t.cutoff)
		if errIs(err, ErrObjectLocked) {
			continue // object lock outranks the lifecycle: the version stays
		}
		if err != nil {
			return n, err
		}
		if expired {
			n++
		}
	}
	return n, nil
}

// expireKey deletes the current version of key if it is still older than
// cutoff when the deletion commits (it may have been overwritten since).
func (s *Store) expireKey(ctx context.Context, bucket, key string, cutoff time.Time) (bool, error) {
	expired := false
	err := s.commit(ctx, nil, 0, func(tx meta.Tx) error {
		expired = false
		b, err := getBucket(tx, bucket)
		if err != nil {
			return err
		}
		cur, err := currentVersion(tx, bucket, key)
		if err != nil || cur == nil || !cur.ModTime.Before(cutoff) {
			return err
		}
		_, err = deleteCurrent(tx, b, key)
		expired = err == nil // a locked key (ErrObjectLocked) is not expired
		return err
	})
	if err != nil && errIs(err, ErrNoSuchBucket) {
		return false, nil
	}
	if expired && err == nil {
		s.notify(Event{Op: OpDelete, Bucket: bucket, Key: key})
	}
	return expired, err
}
