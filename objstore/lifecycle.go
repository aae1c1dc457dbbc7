package objstore

import (
	"context"
	"net/url"
	"strings"
	"time"

	"github.com/cairnstore/cairn/objstore/meta"
)

// Bucket lifecycle rules (meta.LifecycleRule), applied by the lifecycle
// worker (runLifecycle) or a caller of ExpireUploads / ExpireObjects with
// the time to apply them at.
//
// Invariants:
//   - An action of N days counted from t falls due at t + N lifecycle
//     days rounded up to a whole lifecycle day (lifecycleDue): with 24 h
//     days the next midnight UTC, as S3 counts. Expiration counts from the
//     version's modification time, NoncurrentVersionExpiration from the
//     modification time of the version that replaced it,
//     AbortIncompleteMultipartUpload from the upload's initiation.
//   - A rule applies to a version by its key's prefix, its tags and its
//     size as the faces show it (ruleApplies, Options.ShownSize);
//     incomplete uploads by prefix alone.
//   - Every action is decided again inside the transaction that carries
//     it out (applyRule), so a key written or deleted since the scan is
//     judged as it is then.
//   - A locked version is never removed (checkRemovable, lock.go): the
//     lifecycle skips it and goes on.

// lifecycleDue returns when an action of days lifecycle days counted
// from t falls due.
func (s *Store) lifecycleDue(t time.Time, days int) time.Time {
	d := s.opt.LifecycleDay
	due := t.Add(time.Duration(days) * d)
	if r := due.Truncate(d); !r.Equal(due) {
		return r.Add(d)
	}
	return due
}

// shownSize is info's size as the faces show it (Options.ShownSize).
func (s *Store) shownSize(info ObjectInfo) int64 {
	if s.opt.ShownSize == nil {
		return info.Size
	}
	return s.opt.ShownSize(info)
}

// versionSize is the shown size of version v of key.
func (s *Store) versionSize(key string, v *meta.Version) int64 {
	if s.opt.ShownSize == nil {
		return v.Size
	}
	return s.opt.ShownSize(toInfo("", key, v, false))
}

// ruleApplies reports whether r's filter takes in a version of key with
// the given size and attributes.
func ruleApplies(r *LifecycleRule, key string, size int64, a Attrs) bool {
	if !strings.HasPrefix(key, r.Prefix) {
		return false
	}
	if r.SizeGreaterThan != nil && size <= *r.SizeGreaterThan {
		return false
	}
	if r.SizeLessThan != nil && size >= *r.SizeLessThan {
		return false
	}
	if len(r.Tags) == 0 {
		return true
	}
	q, err := url.ParseQuery(a.Sys[r.TagRecord])
	if err != nil {
		return false // an unreadable tag record carries no tags
	}
	for _, t := range r.Tags {
		if !q.Has(t.Key) || q.Get(t.Key) != t.Value {
			return false
		}
	}
	return true
}

// Expiration returns when the rules' Expiration actions expire info,
// taken as its key's current version, and the ID of the rule that does it
// first; ok is false when no enabled rule expires it. It is the answer of
// S3's x-amz-expiration header.
func (s *Store) Expiration(rules []LifecycleRule, info ObjectInfo) (at time.Time, ruleID string, ok bool) {
	if info.DeleteMarker {
		return time.Time{}, "", false
	}
	for i := range rules {
		r := &rules[i]
		if !r.Enabled || !ruleApplies(r, info.Key, s.shownSize(info), info.Attrs) {
			continue
		}
		var due time.Time
		switch {
		case r.ExpirationDays > 0:
			due = s.lifecycleDue(info.ModTime, r.ExpirationDays)
		case !r.ExpirationDate.IsZero():
			due = r.ExpirationDate
		default:
			continue
		}
		if !ok || due.Before(at) {
			at, ruleID, ok = due, r.ID, true
		}
	}
	return at.UTC(), ruleID, ok
}

// ExpireUploads aborts the incomplete multipart uploads that a bucket
// lifecycle rule (AbortIncompleteMultipartUpload) says have expired at now,
// and returns how many it aborted.
func (s *Store) ExpireUploads(ctx context.Context, now time.Time) (int, error) {
	var expired []meta.Upload
	err := s.forEachRule(ctx, func(tx meta.Tx, b *meta.Bucket, r LifecycleRule) error {
		if r.AbortIncompleteDays <= 0 {
			return nil
		}
		p := meta.ObjectKey(b.Name, r.Prefix)
		return meta.Scan(tx, meta.Uploads, p, func(_, uraw []byte) error {
			var u meta.Upload
			if err := meta.Decode(uraw, &u); err != nil {
				return err
			}
			if !now.Before(s.lifecycleDue(u.Initiated, r.AbortIncompleteDays)) && strings.HasPrefix(u.Key, r.Prefix) {
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
			s.log.Info().Int("versions", n).Msg("expired object versions")
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// ExpireObjects applies the object actions of bucket lifecycles at now
// and returns how many versions it expired or removed:
//   - Expiration (Days or Date): a current version the rule applies to is
//     deleted as a DELETE without version id would (a delete marker in a
//     versioned bucket);
//   - NoncurrentVersionExpiration: a noncurrent version the rule applies
//     to, noncurrent for NoncurrentDays and not among the key's
//     NewerNoncurrent newest noncurrent versions, is removed;
//   - ExpiredObjectDeleteMarker: a delete marker that is the only version
//     of its key left is removed.
//
// A version locked at the wall clock's now is never removed, whatever
// now says (an unversioned key under lock is skipped; lock.go).
func (s *Store) ExpireObjects(ctx context.Context, now time.Time) (int, error) {
	type target struct {
		bucket, key string
		rule        int
	}
	var targets []target
	rules := map[string][]LifecycleRule{}
	err := s.idx.View(ctx, func(tx meta.Tx) error {
		return meta.Scan(tx, meta.Buckets, nil, func(_, raw []byte) error {
			var b meta.Bucket
			if err := meta.Decode(raw, &b); err != nil {
				return err
			}
			rules[b.Name] = b.Lifecycle
			for i := range b.Lifecycle {
				r := &b.Lifecycle[i]
				if !r.Enabled {
					continue
				}
				err := s.scanRule(tx, b.Name, r, now, func(key string) {
					targets = append(targets, target{b.Name, key, i})
				})
				if err != nil {
					return err
				}
			}
			return nil
		})
	})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, t := range targets {
		k, err := s.applyRule(ctx, t.bucket, t.key, rules[t.bucket][t.rule], now)
		if err != nil {
			return n, err
		}
		n += k
	}
	return n, nil
}

// scanRule calls found with every key of bucket that r acts on at now.
// A rule with only Expiration reads the current versions; one with
// noncurrent or delete-marker actions reads every version.
func (s *Store) scanRule(tx meta.Tx, bucket string, r *LifecycleRule, now time.Time, found func(key string)) error {
	p := meta.ObjectKey(bucket, r.Prefix)
	if r.NoncurrentDays == 0 && !r.ExpiredDeleteMarker {
		if r.ExpirationDays == 0 && r.ExpirationDate.IsZero() {
			return nil
		}
		return meta.Scan(tx, meta.Objects, p, func(ok, oraw []byte) error {
			var v meta.Version
			if err := meta.Decode(oraw, &v); err != nil {
				return err
			}
			_, key, _ := meta.SplitObjectKey(ok)
			if s.currentExpired(r, key, &v, now) {
				found(key)
			}
			return nil
		})
	}
	var key string
	var vs []meta.Version
	flush := func() {
		if len(vs) > 0 && !s.planKey(r, key, vs, now).empty() {
			found(key)
		}
		vs = vs[:0]
	}
	err := meta.Scan(tx, meta.Versions, p, func(vk, vraw []byte) error {
		_, k, _, ok := meta.SplitVersionKey(vk)
		if !ok {
			return nil
		}
		if k != key {
			flush()
			key = k
		}
		var v meta.Version
		if err := meta.Decode(vraw, &v); err != nil {
			return err
		}
		vs = append(vs, v)
		return nil
	})
	if err != nil {
		return err
	}
	flush()
	return nil
}

// rulePlan is what a rule does to one key's versions.
type rulePlan struct {
	remove []int // indexes of the versions to remove for good
	expire bool  // delete the current version as a DELETE would
}

func (p rulePlan) empty() bool { return len(p.remove) == 0 && !p.expire }

// planKey decides what r does at now to key, whose versions are vs,
// newest first.
func (s *Store) planKey(r *LifecycleRule, key string, vs []meta.Version, now time.Time) rulePlan {
	var p rulePlan
	if len(vs) == 0 {
		return p
	}
	wall := time.Now()
	left := len(vs)
	if r.NoncurrentDays > 0 {
		for i := 1; i < len(vs); i++ {
			v := &vs[i]
			if i <= r.NewerNoncurrent || !ruleApplies(r, key, s.versionSize(key, v), v.Attrs) ||
				now.Before(s.lifecycleDue(vs[i-1].ModTime, r.NoncurrentDays)) ||
				checkRemovable(v, key, wall, false) != nil {
				continue
			}
			p.remove = append(p.remove, i)
			left--
		}
	}
	if r.ExpiredDeleteMarker && left == 1 && vs[0].DeleteMarker && ruleApplies(r, key, 0, Attrs{}) {
		p.remove = append(p.remove, 0)
	}
	p.expire = s.currentExpired(r, key, &vs[0], now)
	return p
}

// currentExpired reports whether r's Expiration action expires the
// current version v of key at now.
func (s *Store) currentExpired(r *LifecycleRule, key string, v *meta.Version, now time.Time) bool {
	if v.DeleteMarker || !ruleApplies(r, key, s.versionSize(key, v), v.Attrs) {
		return false
	}
	if r.ExpirationDays > 0 && !now.Before(s.lifecycleDue(v.ModTime, r.ExpirationDays)) {
		return true
	}
	return !r.ExpirationDate.IsZero() && !now.Before(r.ExpirationDate)
}

// applyRule carries out r's object actions on key at now, decided again
// on the key's versions as they are in the transaction that carries them
// out, and returns how many versions it expired or removed.
func (s *Store) applyRule(ctx context.Context, bucket, key string, r LifecycleRule, now time.Time) (int, error) {
	n := 0
	err := s.commit(ctx, nil, 0, func(tx meta.Tx) error {
		n = 0
		b, err := getBucket(tx, bucket)
		if err != nil {
			return err
		}
		vs, err := keyVersions(tx, bucket, key)
		if err != nil {
			return err
		}
		p := s.planKey(&r, key, vs, now)
		if p.expire && b.Versioning == "" {
			// An unversioned key goes whole: refuse before writing if locked.
			for i := range vs {
				if checkRemovable(&vs[i], key, time.Now(), false) != nil {
					p.expire = false // object lock outranks the lifecycle
				}
			}
		}
		for _, i := range p.remove {
			if err := removeVersion(tx, bucket, key, &vs[i]); err != nil {
				return err
			}
			n++
		}
		if p.expire {
			if _, err := deleteCurrent(tx, b, key); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	if errIs(err, ErrNoSuchBucket) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if n > 0 {
		s.notify(Event{Op: OpDelete, Bucket: bucket, Key: key})
	}
	return n, nil
}
