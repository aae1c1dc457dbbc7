package objstore

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"time"

	"github.com/cairnstore/cairn/objstore/meta"
)

// MaxSegments bounds the segments (and the parts) of a version an Append
// makes, unless Options.MaxSegments sets a lower bound: past it Append
// fails with ErrTooManySegments. It is S3's bound
// on the parts of an appended object. Every append rewrites the version
// record, whose size grows with its segments, and in a versioned bucket
// counts a reference per segment again, so the bound also bounds the
// index work of one append.
const MaxSegments = 10000

// AppendOptions are the options of Append.
type AppendOptions struct {
	// IfMatch makes the append succeed only when the current version's
	// ETag equals it; ErrNoSuchKey when there is none.
	IfMatch string
	// ContentMD5, when set, must equal the MD5 of the appended bytes
	// (ErrBadDigest).
	ContentMD5 []byte
	// ContentType, Meta and Attrs are the new object's when the append
	// creates it (offset 0 and no current version); an append to an
	// existing version keeps that version's.
	ContentType string
	Meta        map[string]string
	Attrs       Attrs
	// Appending, when set, is called inside the commit's transaction with
	// the version appended to (nil when the append creates the object),
	// the number of bytes appended and the new version's metadata and
	// attributes (its own copies), once the body has been read. It may
	// change them, or refuse the append by returning an error, which
	// changes nothing.
	Appending func(prev *ObjectInfo, added int64, meta map[string]string, a *Attrs) error
}

// Append adds body (size bytes; a negative size reads to EOF) to the end
// of the current version of bucket/key, whose size must be offset (S3's
// x-amz-write-offset-bytes); a key without a current version takes
// offset 0 and is created. Only the new bytes are written, as one new
// data object; the new version's segments are the previous version's
// followed by it, committed in one index transaction that checks the
// offset again, so of concurrent appends at one offset exactly one wins
// and the others fail with ErrInvalidWriteOffset, changing nothing. In
// a versioned bucket the append makes a new version and the previous
// one stays; otherwise the new null version replaces the previous null
// version and takes over its data references.
//
// The new version keeps the previous one's content type, metadata and
// attributes. Its ETag is "<hex>-<parts>", the hex MD5 of the previous
// ETag followed by the new bytes' MD5, and it lists its parts (the
// previous version's, or its whole as one, then the new bytes) in
// PartSizes, as a multipart object does. An append of nothing to an
// existing version changes nothing and returns it. Errors: as Put, and
// ErrInvalidWriteOffset, ErrTooManySegments (MaxSegments),
// ErrNotAppendable (an encrypted version).
func (s *Store) Append(ctx context.Context, bucket, key string, offset int64, body io.Reader, size int64, opt AppendOptions) (ObjectInfo, error) {
	if offset < 0 {
		return ObjectInfo{}, fmt.Errorf("%w: write offset %d is negative", ErrInvalidArgument, offset)
	}
	if err := s.pending.waitKey(ctx, bucket, key); err != nil {
		return ObjectInfo{}, err
	}
	if err := s.checkOpen(); err != nil {
		return ObjectInfo{}, err
	}
	if err := ValidateKey(key); err != nil {
		return ObjectInfo{}, err
	}
	// Fail fast, before writing a byte, on what the commit would refuse.
	err := s.idx.View(ctx, func(tx meta.Tx) error {
		if err := requireBucket(tx, bucket); err != nil {
			return err
		}
		cur, err := currentVersion(tx, bucket, key)
		if err != nil {
			return err
		}
		return checkAppend(cur, key, offset, opt.IfMatch, s.opt.MaxSegments)
	})
	if err != nil {
		return ObjectInfo{}, err
	}
	d, sum, err := s.writeData(ctx, bucket, key, body, size, opt.ContentMD5, false)
	if err != nil {
		return ObjectInfo{}, err
	}
	var v *meta.Version
	changed := false
	err = s.commitData(ctx, d, func(tx meta.Tx) error {
		var err error
		v, changed, err = s.appendVersion(tx, bucket, key, offset, d, sum, opt, s.opt.MaxSegments)
		return err
	})
	if err != nil {
		return ObjectInfo{}, err
	}
	if changed {
		s.notify(Event{Op: OpPut, Bucket: bucket, Key: key})
		s.noteSegments(bucket, key, v.VersionID, v.SegmentCount())
	}
	return toInfo(bucket, key, v, true), nil
}

// checkAppend says whether an append at offset may extend cur (nil: the
// key has no current version).
func checkAppend(cur *meta.Version, key string, offset int64, ifMatch string, maxSegs int) error {
	if err := checkConds(cur, key, ifMatch, ""); err != nil {
		return err
	}
	size := int64(0)
	if cur != nil {
		size = cur.Size
	}
	if offset != size {
		return fmt.Errorf("%w: offset %d, but %s holds %d bytes: append at %d", ErrInvalidWriteOffset, offset, key, size, size)
	}
	if cur == nil {
		return nil
	}
	if cur.Attrs.Sys[SysEncryption] != "" {
		return fmt.Errorf("%w: %s is encrypted (its ciphertext is keyed to the whole object); write it whole with a put", ErrNotAppendable, key)
	}
	if n := cur.SegmentCount(); n+1 > maxSegs || max(len(cur.PartSizes), 1)+1 > maxSegs {
		return fmt.Errorf("%w: %s has %d segments and %d parts, the most is %d; rewrite it whole to append again", ErrTooManySegments, key, n, max(len(cur.PartSizes), 1), maxSegs)
	}
	return nil
}

// appendVersion is Append's transaction: it checks the offset against
// the current version and installs the version made of it and d. It
// reports whether it changed anything (an empty append to an existing
// version does not).
func (s *Store) appendVersion(tx meta.Tx, bucket, key string, offset int64, d *newData, sum []byte, opt AppendOptions, maxSegs int) (*meta.Version, bool, error) {
	b, err := getBucket(tx, bucket)
	if err != nil {
		return nil, false, err
	}
	cur, err := currentVersion(tx, bucket, key)
	if err != nil {
		return nil, false, err
	}
	if err := checkAppend(cur, key, offset, opt.IfMatch, maxSegs); err != nil {
		return nil, false, err
	}
	var added []meta.Segment
	var n int64
	if d != nil {
		added = []meta.Segment{d.segment()}
		n = d.rec.Size
	}
	if cur != nil && n == 0 {
		return cur, false, nil
	}
	now := time.Now().UTC()
	var v *meta.Version
	var prev *ObjectInfo
	segs := added
	if cur == nil {
		v = &meta.Version{ETag: hex.EncodeToString(sum), ModTime: now, ContentType: opt.ContentType,
			Meta: maps.Clone(opt.Meta), Attrs: opt.Attrs, Size: n}
	} else {
		v = &meta.Version{ModTime: now, ContentType: cur.ContentType, Meta: maps.Clone(cur.Meta),
			Attrs: cur.Attrs, Size: cur.Size + n}
		curSegs, err := versionSegments(tx, cur)
		if err != nil {
			return nil, false, err
		}
		segs = append(append(make([]meta.Segment, 0, len(curSegs)+1), curSegs...), added...)
		v.PartSizes = make([]int64, 0, len(cur.PartSizes)+2)
		switch {
		case len(cur.PartSizes) > 0:
			v.PartSizes = append(v.PartSizes, cur.PartSizes...)
		case cur.Size > 0:
			v.PartSizes = append(v.PartSizes, cur.Size)
		}
		v.PartSizes = append(v.PartSizes, n)
		v.ETag = appendETag(cur.ETag, sum, len(v.PartSizes))
		info := toInfo(bucket, key, cur, true)
		prev = &info
	}
	if opt.Appending != nil {
		if v.Meta == nil {
			v.Meta = map[string]string{}
		}
		v.Attrs.Sys = maps.Clone(v.Attrs.Sys)
		if err := opt.Appending(prev, n, v.Meta, &v.Attrs); err != nil {
			return nil, false, err
		}
	}
	// In a bucket without versioning enabled the new null version replaces
	// the previous one, whose references it takes over: only the new
	// segment is counted (a chunked one's chunks go, their references
	// passing to v's list). Otherwise the previous version stays and every
	// segment gains a reference.
	var inherit *meta.Version
	counted := segs
	if cur != nil && b.Versioning != VersioningEnabled && cur.VersionID == NullVersion {
		inherit, counted = cur, added
		for _, c := range cur.Chunks {
			if err := tx.Delete(meta.Chunks, meta.ChunkKey(c.ID)); err != nil {
				return nil, false, err
			}
		}
	}
	if err := addRefs(tx, counted); err != nil {
		return nil, false, err
	}
	if err := s.setSegments(tx, v, segs); err != nil {
		return nil, false, err
	}
	if err := installVersionFrom(tx, b, key, v, inherit); err != nil {
		return nil, false, err
	}
	return v, true, nil
}

// appendETag is the ETag of a version made by appending bytes whose MD5
// is sum to a version whose ETag is prev: the MD5 of prev and sum, in
// the multipart form (a dash and the part count), so that no client
// takes it for the MD5 of the whole.
func appendETag(prev string, sum []byte, parts int) string {
	h := md5.New()
	h.Write([]byte(prev))
	h.Write(sum)
	return fmt.Sprintf("%s-%d", hex.EncodeToString(h.Sum(nil)), parts)
}
