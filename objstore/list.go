package objstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cairnstore/cairn/objstore/meta"
)

const defaultMaxKeys = 1000

// past is appended to a prefix to seek beyond every key starting with it:
// 0xff never occurs in UTF-8.
const past = "\xff"

// List returns one page of the bucket's current objects in key order, with
// keys sharing a prefix up to the delimiter rolled into CommonPrefixes.
// The whole page comes from one index snapshot.
func (s *Store) List(ctx context.Context, bucket string, opt ListOptions) (ListPage, error) {
	if err := s.pending.waitPrefix(ctx, bucket, opt.Prefix); err != nil {
		return ListPage{}, err
	}
	max, err := maxKeys(opt.MaxKeys)
	if err != nil {
		return ListPage{}, err
	}
	if err := validatePrefix(opt.Prefix); err != nil {
		return ListPage{}, err
	}
	var page ListPage
	err = s.idx.View(ctx, func(tx meta.Tx) error {
		if err := requireBucket(tx, bucket); err != nil {
			return err
		}
		bp := meta.BucketPrefix(bucket)
		full := append(append([]byte{}, bp...), opt.Prefix...)
		c := tx.Cursor(meta.Objects)
		k, v := c.Seek(full)
		if opt.After != "" && opt.After >= opt.Prefix {
			k, v = c.Seek(append(append(append([]byte{}, bp...), opt.After...), 0))
		}
		for count := 0; meta.HasPrefix(k, full); {
			key := string(k[len(bp):])
			if cp, ok := commonPrefix(key, opt.Prefix, opt.Delimiter); ok {
				if listedBefore(cp, opt.After) {
					k, v = c.Seek(append(append(append([]byte{}, bp...), cp...), past...))
					continue
				}
				if count == max {
					page.IsTruncated = true
					break
				}
				page.CommonPrefixes = append(page.CommonPrefixes, cp)
				page.NextMarker = cp
				count++
				k, v = c.Seek(append(append(append([]byte{}, bp...), cp...), past...))
				continue
			}
			if count == max {
				page.IsTruncated = true
				break
			}
			var ver meta.Version
			if err := meta.Decode(v, &ver); err != nil {
				return err
			}
			page.Objects = append(page.Objects, toInfo(bucket, key, &ver, true))
			page.NextMarker = key
			count++
			k, v = c.Next()
		}
		if !page.IsTruncated {
			page.NextMarker = ""
		}
		return c.Err()
	})
	return page, err
}

func maxKeys(n int) (int, error) {
	switch {
	case n < 0:
		return 0, fmt.Errorf("%w: max keys %d", ErrInvalidArgument, n)
	case n == 0:
		return defaultMaxKeys, nil
	}
	return n, nil
}

// listedBefore reports whether common prefix cp was listed on an earlier
// page than one ending at after: it sorts before after, unless after lies
// inside it (a marker in the middle of a rolled-up prefix, whose later keys
// still roll up into it, as S3 does).
func listedBefore(cp, after string) bool {
	return cp <= after && (after == cp || !strings.HasPrefix(after, cp))
}

// commonPrefix returns the prefix up to and including the first delimiter
// after prefix in key.
func commonPrefix(key, prefix, delim string) (string, bool) {
	if delim == "" {
		return "", false
	}
	i := strings.Index(key[len(prefix):], delim)
	if i < 0 {
		return "", false
	}
	return key[:len(prefix)+i+len(delim)], true
}

// ListVersions returns one page of every version and delete marker of the
// bucket, in key order and newest first within a key.
func (s *Store) ListVersions(ctx context.Context, bucket string, opt ListVersionsOptions) (VersionsPage, error) {
	if err := s.pending.waitPrefix(ctx, bucket, opt.Prefix); err != nil {
		return VersionsPage{}, err
	}
	max, err := maxKeys(opt.MaxKeys)
	if err != nil {
		return VersionsPage{}, err
	}
	if err := validatePrefix(opt.Prefix); err != nil {
		return VersionsPage{}, err
	}
	if opt.VersionIDMarker != "" && opt.KeyMarker == "" {
		return VersionsPage{}, fmt.Errorf("%w: a version-id marker needs a key marker", ErrInvalidArgument)
	}
	var page VersionsPage
	err = s.idx.View(ctx, func(tx meta.Tx) error {
		if err := requireBucket(tx, bucket); err != nil {
			return err
		}
		bp := meta.BucketPrefix(bucket)
		full := append(append([]byte{}, bp...), opt.Prefix...)
		c := tx.Cursor(meta.Versions)
		k, v := c.Seek(full)
		after := opt.KeyMarker
		switch {
		case opt.VersionIDMarker != "" && opt.KeyMarker < opt.Prefix:
			after = ""
		case opt.VersionIDMarker != "":
			// Resume after the marker version, even if it was deleted
			// since: its id gives its place. A gone null version
			// resumes at the next key.
			seq, ok := parseVersionID(opt.VersionIDMarker)
			if !ok {
				mv, err := findVersion(tx, bucket, opt.KeyMarker, opt.VersionIDMarker)
				if err != nil && !errors.Is(err, ErrNoSuchVersion) {
					return err
				}
				if mv != nil {
					seq, ok = mv.Seq, true
				}
			}
			if ok {
				mk := meta.VersionKey(bucket, opt.KeyMarker, seq)
				if k, v = c.Seek(mk); bytes.Equal(k, mk) {
					k, v = c.Next()
				}
				after = "" // the rest of the marker key's versions follow
			} else {
				k, v = c.Seek(append(append(append([]byte{}, bp...), opt.KeyMarker...), 1))
			}
		case opt.KeyMarker != "" && opt.KeyMarker >= opt.Prefix:
			k, v = c.Seek(append(append(append([]byte{}, bp...), opt.KeyMarker...), 1))
		}
		lastKey := ""
		if opt.VersionIDMarker != "" {
			lastKey = opt.KeyMarker // versions after the marker are not the newest
		}
		for count := 0; meta.HasPrefix(k, full); {
			_, key, _, ok := meta.SplitVersionKey(k)
			if !ok {
				return fmt.Errorf("%w: versions key %q", meta.ErrCorruptRecord, k)
			}
			if cp, ok := commonPrefix(key, opt.Prefix, opt.Delimiter); ok {
				if listedBefore(cp, after) || (opt.VersionIDMarker != "" && strings.HasPrefix(opt.KeyMarker, cp)) {
					k, v = c.Seek(append(append(append([]byte{}, bp...), cp...), past...))
					continue
				}
				if count == max {
					page.IsTruncated = true
					break
				}
				page.CommonPrefixes = append(page.CommonPrefixes, cp)
				page.NextKeyMarker, page.NextVersionIDMarker = cp, ""
				count++
				k, v = c.Seek(append(append(append([]byte{}, bp...), cp...), past...))
				continue
			}
			if count == max {
				page.IsTruncated = true
				break
			}
			var ver meta.Version
			if err := meta.Decode(v, &ver); err != nil {
				return err
			}
			page.Versions = append(page.Versions, toInfo(bucket, key, &ver, key != lastKey))
			lastKey = key
			page.NextKeyMarker, page.NextVersionIDMarker = key, ver.VersionID
			count++
			k, v = c.Next()
		}
		if !page.IsTruncated {
			page.NextKeyMarker, page.NextVersionIDMarker = "", ""
		}
		return c.Err()
	})
	return page, err
}
