package objstore

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/cairnstore/cairn/objstore/meta"
)

// Copy makes a new version of dstBucket/dstKey holding the bytes of the
// source version. No byte is copied: the new version references the same
// data. ETag and size are the source's.
func (s *Store) Copy(ctx context.Context, srcBucket, srcKey, dstBucket, dstKey string, opt CopyOptions) (ObjectInfo, error) {
	if err := s.pending.waitKey(ctx, srcBucket, srcKey); err != nil {
		return ObjectInfo{}, err
	}
	if err := s.pending.waitKey(ctx, dstBucket, dstKey); err != nil {
		return ObjectInfo{}, err
	}
	if err := s.checkOpen(); err != nil {
		return ObjectInfo{}, err
	}
	for _, k := range []string{srcKey, dstKey} {
		if err := ValidateKey(k); err != nil {
			return ObjectInfo{}, err
		}
	}
	if err := validateIfNoneMatch(opt.IfNoneMatch); err != nil {
		return ObjectInfo{}, err
	}
	var out ObjectInfo
	segs := 0 // the new version's, for the segment compactor
	err := s.commit(ctx, nil, 0, func(tx meta.Tx) error {
		src, _, err := lookupVersion(tx, srcBucket, srcKey, opt.SrcVersionID)
		if err != nil {
			return err
		}
		if src.DeleteMarker {
			return fmt.Errorf("%w: %s %s", ErrDeleteMarker, srcKey, src.VersionID)
		}
		if opt.SrcIfMatch != "" && normETag(opt.SrcIfMatch) != src.ETag {
			return fmt.Errorf("%w: copy source If-Match", ErrPreconditionFailed)
		}
		if opt.SrcIfNoneMatch != "" && (normETag(opt.SrcIfNoneMatch) == src.ETag || opt.SrcIfNoneMatch == "*") {
			return fmt.Errorf("%w: copy source If-None-Match", ErrPreconditionFailed)
		}
		b, err := getBucket(tx, dstBucket)
		if err != nil {
			return err
		}
		cur, err := currentVersion(tx, dstBucket, dstKey)
		if err != nil {
			return err
		}
		if err := checkConds(cur, dstKey, opt.IfMatch, opt.IfNoneMatch); err != nil {
			return err
		}
		v := *src
		v.ModTime = time.Now().UTC()
		v.Attrs = Attrs{}
		if opt.AttrsFor != nil {
			v.Attrs = opt.AttrsFor(toInfo(srcBucket, srcKey, src, false))
		}
		if opt.ReplaceMeta {
			v.ContentType, v.Meta = opt.ContentType, opt.Meta
		}
		if err := shareData(tx, &v); err != nil {
			return err
		}
		if err := installVersion(tx, b, dstKey, &v); err != nil {
			return err
		}
		out = toInfo(dstBucket, dstKey, &v, true)
		segs = v.SegmentCount()
		return nil
	})
	if err != nil {
		return ObjectInfo{}, err
	}
	s.noteSegments(dstBucket, dstKey, out.VersionID, segs)
	s.notify(Event{Op: OpPut, Bucket: dstBucket, Key: dstKey})
	return out, nil
}

// Rename moves the current version of bucket/from to bucket/to in one
// transaction, without moving bytes: to gets a new version with the same
// data, size, ETag and modification time, and from is deleted as Delete
// would (a delete marker in a versioned bucket). ErrNoSuchKey when from
// has no current version.
func (s *Store) Rename(ctx context.Context, bucket, from, to string, opt RenameOptions) error {
	for _, k := range []string{from, to} {
		if err := s.pending.waitKey(ctx, bucket, k); err != nil {
			return err
		}
	}
	if err := s.checkOpen(); err != nil {
		return err
	}
	for _, k := range []string{from, to} {
		if err := ValidateKey(k); err != nil {
			return err
		}
	}
	if err := validateIfNoneMatch(opt.IfNoneMatch); err != nil {
		return err
	}
	var moved segCount
	err := s.commit(ctx, nil, 0, func(tx meta.Tx) error {
		moved = segCount{}
		b, err := getBucket(tx, bucket)
		if err != nil {
			return err
		}
		src, err := currentVersion(tx, bucket, from)
		if err != nil {
			return err
		}
		if src == nil {
			return fmt.Errorf("%w: %s/%s", ErrNoSuchKey, bucket, from)
		}
		if err := checkConds(src, from, opt.IfMatch, ""); err != nil {
			return err
		}
		dst, err := currentVersion(tx, bucket, to)
		if err != nil {
			return err
		}
		if err := checkConds(dst, to, opt.DestIfMatch, opt.IfNoneMatch); err != nil {
			return err
		}
		if from == to {
			return nil
		}
		moved, err = renameOne(tx, b, from, to, src)
		return err
	})
	if err != nil {
		return err
	}
	s.noteSegments(bucket, moved.key, moved.versionID, moved.n)
	s.notify(Event{Op: OpRename, Bucket: bucket, Key: from, To: to})
	return nil
}

// renameOne moves src, the current version of from, to to and returns
// the note of the version made there for the segment compactor.
func renameOne(tx meta.Tx, b *meta.Bucket, from, to string, src *meta.Version) (segCount, error) {
	v := *src
	if err := shareData(tx, &v); err != nil {
		return segCount{}, err
	}
	if err := installVersion(tx, b, to, &v); err != nil {
		return segCount{}, err
	}
	_, err := deleteCurrent(tx, b, from)
	return segCount{key: to, versionID: v.VersionID, n: v.SegmentCount()}, err
}

// RenamePrefix renames every key under prefix from to the same key under
// prefix to, all in one transaction: a reader sees every old name or every
// new name. Only index entries change, so the time does not depend on the
// objects' sizes. Keys existing under to are replaced unless
// opt.IfNoneMatch is "*", which fails with ErrPreconditionFailed when any
// key exists under to. Prefixes nested in each other are
// ErrInvalidArgument. It returns the number of keys renamed.
func (s *Store) RenamePrefix(ctx context.Context, bucket, from, to string, opt RenameOptions) (int, error) {
	for _, p := range []string{from, to} {
		if err := s.pending.waitPrefix(ctx, bucket, p); err != nil {
			return 0, err
		}
	}
	if err := s.checkOpen(); err != nil {
		return 0, err
	}
	for _, k := range []string{from, to} {
		if err := ValidateKey(k); err != nil {
			return 0, err
		}
	}
	if err := validateIfNoneMatch(opt.IfNoneMatch); err != nil {
		return 0, err
	}
	if from == to {
		return 0, nil
	}
	if strings.HasPrefix(to, from) || strings.HasPrefix(from, to) {
		return 0, fmt.Errorf("%w: cannot rename %q into %q: one contains the other", ErrInvalidArgument, from, to)
	}
	var n int
	var moved []segCount // the versions with many segments, for the segment compactor
	err := s.commit(ctx, nil, 0, func(tx meta.Tx) error {
		n, moved = 0, nil
		b, err := getBucket(tx, bucket)
		if err != nil {
			return err
		}
		if opt.IfNoneMatch == "*" {
			p := meta.ObjectKey(bucket, to)
			c := tx.Cursor(meta.Objects)
			k, _ := c.Seek(p)
			if meta.HasPrefix(k, p) && opt.ReplaceMarker && bytes.Equal(k, p) {
				if k, _ = c.Next(); !meta.HasPrefix(k, p) && c.Err() == nil {
					if _, err := deleteCurrent(tx, b, to); err != nil {
						return err
					}
				}
			}
			if err := c.Err(); err != nil {
				return err
			}
			taken, err := meta.HasAny(tx, meta.Objects, p)
			if err != nil {
				return err
			}
			if taken {
				return fmt.Errorf("%w: keys exist under %q", ErrPreconditionFailed, to)
			}
		}
		type item struct {
			key string
			v   meta.Version
		}
		var items []item
		p := meta.ObjectKey(bucket, from)
		err = meta.Scan(tx, meta.Objects, p, func(k, raw []byte) error {
			var v meta.Version
			if err := meta.Decode(raw, &v); err != nil {
				return err
			}
			_, key, _ := meta.SplitObjectKey(k)
			items = append(items, item{key, v})
			return nil
		})
		if err != nil {
			return err
		}
		for i := range items {
			dst := to + strings.TrimPrefix(items[i].key, from)
			if err := ValidateKey(dst); err != nil {
				return err
			}
			c, err := renameOne(tx, b, items[i].key, dst, &items[i].v)
			if err != nil {
				return err
			}
			if c.n > s.opt.SegmentCompactMin {
				moved = append(moved, c)
			}
		}
		n = len(items)
		return nil
	})
	if err != nil {
		return 0, err
	}
	if n > 0 {
		s.notify(Event{Op: OpRenamePrefix, Bucket: bucket, Key: from, To: to})
	}
	for _, c := range moved {
		s.noteSegments(bucket, c.key, c.versionID, c.n)
	}
	return n, nil
}
