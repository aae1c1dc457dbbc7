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
	err := s.idx.View(ctx, func(tx meta.Tx) error {
		bc := tx.Cursor(meta.Buckets)
		for k, raw := bc.First(); k != nil; k, raw = bc.Next() {
			var b meta.Bucket
			if err := meta.Decode(raw, &b); err != nil {
				return err
			}
			for _, r := range b.Lifecycle {
				if !r.Enabled || r.AbortIncompleteDays <= 0 {
					continue
				}
				cutoff := now.Add(-time.Duration(r.AbortIncompleteDays) * 24 * time.Hour)
				p := meta.ObjectKey(b.Name, r.Prefix)
				uc := tx.Cursor(meta.Uploads)
				for uk, uraw := uc.Seek(p); meta.HasPrefix(uk, p); uk, uraw = uc.Next() {
					var u meta.Upload
					if err := meta.Decode(uraw, &u); err != nil {
						return err
					}
					if u.Initiated.Before(cutoff) && strings.HasPrefix(u.Key, r.Prefix) {
						expired = append(expired, u)
					}
				}
			}
		}
		return nil
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

func (s *Store) runLifecycle(ctx context.Context) {
	t := time.NewTicker(s.opt.LifecycleInterval)
	defer t.Stop()
	for {
		if n, err := s.ExpireUploads(ctx, time.Now()); err != nil && ctx.Err() == nil {
			s.log.Error().Err(err).Msg("lifecycle")
		} else if n > 0 {
			s.log.Info().Int("uploads", n).Msg("aborted expired multipart uploads")
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
