package objstore

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/cairnstore/cairn/objstore/meta"
)

// CreateBucket makes an empty bucket; ErrBucketExists when it exists.
func (s *Store) CreateBucket(ctx context.Context, name string, opt BucketOptions) error {
	if err := ValidateBucketName(name); err != nil {
		return err
	}
	return s.commit(ctx, nil, 0, func(tx meta.Tx) error {
		ok, err := meta.Has(tx, meta.Buckets, []byte(name))
		if err != nil {
			return err
		}
		if ok {
			return fmt.Errorf("%w: %s", ErrBucketExists, name)
		}
		b := meta.Bucket{Name: name, Created: time.Now().UTC(), Owner: opt.Owner, ObjectLock: opt.ObjectLock}
		if opt.ObjectLock {
			b.Versioning = VersioningEnabled
		}
		return tx.Put(meta.Buckets, []byte(name), meta.Encode(b))
	})
}

// EnsureSystemBucket creates, when absent, a bucket for the server's own
// state (users, catalog). Its name starts with "." so that no client can
// create or address it (S3 names cannot), and ListBuckets leaves it out.
func (s *Store) EnsureSystemBucket(ctx context.Context, name string) error {
	if !strings.HasPrefix(name, ".") || ValidateBucketName(name[1:]) != nil {
		return fmt.Errorf("%w: system bucket %q must be \".\" and a valid bucket name", ErrInvalidBucketName, name)
	}
	return s.commit(ctx, nil, 0, func(tx meta.Tx) error {
		if ok, err := meta.Has(tx, meta.Buckets, []byte(name)); ok || err != nil {
			return err
		}
		return tx.Put(meta.Buckets, []byte(name), meta.Encode(meta.Bucket{Name: name, Created: time.Now().UTC()}))
	})
}

// IsSystemBucket reports whether name is a system bucket's name.
func IsSystemBucket(name string) bool { return strings.HasPrefix(name, ".") }

// DeleteBucket removes an empty bucket: one with no object and no version
// (delete markers included). Its incomplete multipart uploads go with it,
// their parts freed as AbortMultipartUpload frees them, in the same
// transaction: AWS deletes a general purpose bucket that holds only uploads.
func (s *Store) DeleteBucket(ctx context.Context, name string) error {
	return s.commit(ctx, nil, 0, func(tx meta.Tx) error {
		if err := requireBucket(tx, name); err != nil {
			return err
		}
		p := meta.BucketPrefix(name)
		for _, t := range []meta.Table{meta.Versions, meta.Objects} {
			any, err := meta.HasAny(tx, t, p)
			if err != nil {
				return err
			}
			if any {
				return fmt.Errorf("%w: %s", ErrBucketNotEmpty, name)
			}
		}
		var uploads []meta.Upload
		err := meta.Scan(tx, meta.Uploads, p, func(_, raw []byte) error {
			var u meta.Upload
			if err := meta.Decode(raw, &u); err != nil {
				return err
			}
			uploads = append(uploads, u)
			return nil
		})
		if err != nil {
			return err
		}
		for i := range uploads {
			if err := deleteUpload(tx, &uploads[i], nil); err != nil {
				return fmt.Errorf("abort upload %s of %s: %w", uploads[i].UploadID, name, err)
			}
		}
		return tx.Delete(meta.Buckets, []byte(name))
	})
}

// HeadBucket returns the bucket's description; ErrNoSuchBucket when absent.
func (s *Store) HeadBucket(ctx context.Context, name string) (BucketInfo, error) {
	var info BucketInfo
	err := s.idx.View(ctx, func(tx meta.Tx) error {
		raw, err := tx.Get(meta.Buckets, []byte(name))
		if err != nil {
			return err
		}
		if raw == nil {
			return fmt.Errorf("%w: %s", ErrNoSuchBucket, name)
		}
		if c, ok := s.buckets.get(name, raw); ok {
			info = c
			return nil
		}
		var b meta.Bucket
		if err := meta.Decode(raw, &b); err != nil {
			return err
		}
		info = bucketInfo(&b)
		s.buckets.put(name, raw, info)
		return nil
	})
	return info, err
}

// ListBuckets returns every bucket but the system ones, sorted by name.
func (s *Store) ListBuckets(ctx context.Context) ([]BucketInfo, error) {
	var out []BucketInfo
	err := s.idx.View(ctx, func(tx meta.Tx) error {
		return meta.Scan(tx, meta.Buckets, nil, func(k, v []byte) error {
			if IsSystemBucket(string(k)) {
				return nil
			}
			var b meta.Bucket
			if err := meta.Decode(v, &b); err != nil {
				return err
			}
			out = append(out, bucketInfo(&b))
			return nil
		})
	})
	return out, err
}

func bucketInfo(b *meta.Bucket) BucketInfo {
	return BucketInfo{Name: b.Name, Created: b.Created, Versioning: b.Versioning,
		Owner: b.Owner, ObjectLock: b.ObjectLock, Config: b.Config, Lifecycle: b.Lifecycle}
}

// SetBucketConfig stores doc as the bucket's document called name (nil
// or empty removes it). The store keeps the bytes and returns them in
// BucketInfo.Config; what they mean is the face's business.
func (s *Store) SetBucketConfig(ctx context.Context, bucket, name string, doc []byte) error {
	if name == "" {
		return fmt.Errorf("%w: empty bucket config name", ErrInvalidArgument)
	}
	return s.updateBucket(ctx, bucket, func(b *meta.Bucket) error {
		if len(doc) == 0 {
			delete(b.Config, name)
			return nil
		}
		if b.Config == nil {
			b.Config = map[string][]byte{}
		}
		b.Config[name] = bytes.Clone(doc)
		return nil
	})
}

// SetVersioning turns versioning on ("Enabled") or suspends it
// ("Suspended"). A bucket never returns to unversioned, and a bucket with
// object lock cannot be suspended (ErrInvalidBucketState).
func (s *Store) SetVersioning(ctx context.Context, name, state string) error {
	if state != VersioningEnabled && state != VersioningSuspended {
		return fmt.Errorf("%w: versioning status %q", ErrInvalidArgument, state)
	}
	return s.updateBucket(ctx, name, func(b *meta.Bucket) error {
		if b.ObjectLock && state != VersioningEnabled {
			return fmt.Errorf("%w: %s has object lock: versioning cannot be suspended", ErrInvalidBucketState, name)
		}
		b.Versioning = state
		return nil
	})
}

// SetObjectLock enables object lock on an existing bucket, which must have
// versioning enabled (ErrInvalidBucketState otherwise). Object lock is
// never disabled; enabling it again does nothing.
func (s *Store) SetObjectLock(ctx context.Context, name string) error {
	return s.updateBucket(ctx, name, func(b *meta.Bucket) error {
		if b.Versioning != VersioningEnabled {
			return fmt.Errorf("%w: %s: object lock needs versioning enabled", ErrInvalidBucketState, name)
		}
		b.ObjectLock = true
		return nil
	})
}

// LifecycleRule is a bucket lifecycle rule the store enforces.
type LifecycleRule = meta.LifecycleRule

// Tag is one key-value pair of a lifecycle rule's tag filter.
type Tag = meta.Tag

// SetLifecycle replaces the bucket's lifecycle rules (nil removes them).
func (s *Store) SetLifecycle(ctx context.Context, name string, rules []LifecycleRule) error {
	for _, r := range rules {
		if r.AbortIncompleteDays < 0 || r.ExpirationDays < 0 || r.NoncurrentDays < 0 || r.NewerNoncurrent < 0 {
			return fmt.Errorf("%w: lifecycle rule %q: negative days or versions", ErrInvalidArgument, r.ID)
		}
		if len(r.Tags) > 0 && r.TagRecord == "" {
			return fmt.Errorf("%w: lifecycle rule %q: tags without a tag record", ErrInvalidArgument, r.ID)
		}
	}
	return s.updateBucket(ctx, name, func(b *meta.Bucket) error {
		b.Lifecycle = append([]LifecycleRule(nil), rules...)
		return nil
	})
}

// Lifecycle returns the bucket's lifecycle rules.
func (s *Store) Lifecycle(ctx context.Context, name string) ([]LifecycleRule, error) {
	var out []LifecycleRule
	err := s.idx.View(ctx, func(tx meta.Tx) error {
		b, err := getBucket(tx, name)
		if err != nil {
			return err
		}
		out = b.Lifecycle
		return nil
	})
	return out, err
}

func (s *Store) updateBucket(ctx context.Context, name string, fn func(*meta.Bucket) error) error {
	return s.commit(ctx, nil, 0, func(tx meta.Tx) error {
		b, err := getBucket(tx, name)
		if err != nil {
			return err
		}
		if err := fn(b); err != nil {
			return err
		}
		return tx.Put(meta.Buckets, []byte(name), meta.Encode(b))
	})
}

func toInfo(bucket, key string, v *meta.Version, latest bool) ObjectInfo {
	return ObjectInfo{
		Bucket: bucket, Key: key, VersionID: v.VersionID, Size: v.Size, ETag: v.ETag,
		ModTime: v.ModTime, ContentType: v.ContentType, Meta: v.Meta,
		DeleteMarker: v.DeleteMarker, IsLatest: latest, PartsCount: len(v.PartSizes), PartSizes: v.PartSizes,
		Attrs: v.Attrs,
	}
}
