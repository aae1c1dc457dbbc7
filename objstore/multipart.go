package objstore

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"strings"
	"time"

	"github.com/cairnstore/cairn/objstore/meta"
)

// UploadInfo describes an incomplete multipart upload.
type UploadInfo struct {
	Bucket, Key, UploadID string
	Initiated             time.Time
	Attrs                 Attrs // given to the version the upload completes into
}

// Upload describes one multipart upload; ErrNoSuchUpload when absent.
func (s *Store) Upload(ctx context.Context, bucket, key, uploadID string) (UploadInfo, error) {
	if err := s.checkOpen(); err != nil {
		return UploadInfo{}, err
	}
	if err := ValidateKey(key); err != nil {
		return UploadInfo{}, err
	}
	var out UploadInfo
	err := s.idx.View(ctx, func(tx meta.Tx) error {
		if err := requireBucket(tx, bucket); err != nil {
			return err
		}
		u, err := getUpload(tx, bucket, key, uploadID)
		if err != nil {
			return err
		}
		out = UploadInfo{Bucket: u.Bucket, Key: u.Key, UploadID: u.UploadID, Initiated: u.Initiated, Attrs: u.Attrs}
		return nil
	})
	return out, err
}

// PartInfo describes an uploaded part.
type PartInfo struct {
	Number   int
	ETag     string
	Size     int64
	ModTime  time.Time
	Checksum string // as PartOptions.Checksum gave it
}

// PartOptions are the options of PutPart.
type PartOptions struct {
	// ContentMD5, when set, must equal the body's MD5 (ErrBadDigest).
	ContentMD5 []byte
	// Checksum, when set, is called once the body has been read to its
	// end and returns the part's checksum to keep (opaque to the store;
	// empty for none).
	Checksum func() string
	// ETag is PutOptions.ETag for a part: when set, its result (32 hex
	// digits, as the multipart ETag is made of the parts' ETags) is the
	// part's ETag and the store does not hash the body unless ContentMD5
	// asks it to check it.
	ETag func() string
}

// CompletePart names a part in a complete request.
type CompletePart struct {
	Number int
	ETag   string
	// Checksum, when not empty, must equal the part's kept checksum
	// (ErrInvalidPart otherwise).
	Checksum string
}

func partInfo(p *meta.Part) PartInfo {
	return PartInfo{Number: p.Number, ETag: p.ETag, Size: p.Size, ModTime: p.ModTime, Checksum: p.Checksum}
}

// CreateMultipartUpload starts an upload of bucket/key; the object stays
// invisible until CompleteMultipartUpload. opt's content type and metadata
// become the object's; its conditions are checked at complete time.
func (s *Store) CreateMultipartUpload(ctx context.Context, bucket, key string, opt PutOptions) (string, error) {
	if err := s.checkOpen(); err != nil {
		return "", err
	}
	if err := ValidateKey(key); err != nil {
		return "", err
	}
	var raw [16]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", err
	}
	id := hex.EncodeToString(raw[:])
	err := s.commit(ctx, nil, 0, func(tx meta.Tx) error {
		if err := requireBucket(tx, bucket); err != nil {
			return err
		}
		u := meta.Upload{Bucket: bucket, Key: key, UploadID: id, Initiated: time.Now().UTC(),
			ContentType: opt.ContentType, Meta: opt.Meta, Attrs: opt.Attrs}
		if err := tx.Put(meta.Uploads, meta.UploadKey(bucket, key, id), meta.Encode(u)); err != nil {
			return err
		}
		return tx.Put(meta.UploadIDs, []byte(id), meta.ObjectKey(bucket, key))
	})
	return id, err
}

// getUpload returns the upload, checking it belongs to bucket/key.
func getUpload(tx meta.Tx, bucket, key, id string) (*meta.Upload, error) {
	raw, err := tx.Get(meta.Uploads, meta.UploadKey(bucket, key, id))
	if err != nil {
		return nil, err
	}
	if raw == nil {
		return nil, fmt.Errorf("%w: %s", ErrNoSuchUpload, id)
	}
	var u meta.Upload
	if err := meta.Decode(raw, &u); err != nil {
		return nil, err
	}
	return &u, nil
}

func getPart(tx meta.Tx, id string, n int) (*meta.Part, error) {
	raw, err := tx.Get(meta.Parts, meta.PartKey(id, n))
	if raw == nil || err != nil {
		return nil, err
	}
	var p meta.Part
	if err := meta.Decode(raw, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// putPartRecord stores p, releasing the part it replaces. p's segment
// references must be counted by the caller.
func putPartRecord(tx meta.Tx, bucket, key, id string, p *meta.Part) error {
	if _, err := getUpload(tx, bucket, key, id); err != nil {
		return err
	}
	old, err := getPart(tx, id, p.Number)
	if err != nil {
		return err
	}
	if old != nil {
		if err := dropRefs(tx, old.Segments); err != nil {
			return err
		}
	}
	return tx.Put(meta.Parts, meta.PartKey(id, p.Number), meta.Encode(p))
}

// PutPart uploads part n (1..10000) of an upload; uploading a number again
// replaces the part.
func (s *Store) PutPart(ctx context.Context, bucket, key, uploadID string, n int, body io.Reader, size int64, opt PartOptions) (PartInfo, error) {
	if err := validatePartNumber(n); err != nil {
		return PartInfo{}, err
	}
	if err := s.checkUpload(ctx, bucket, key, uploadID); err != nil {
		return PartInfo{}, err
	}
	d, sum, err := s.writeData(ctx, bucket, key, body, size, opt.ContentMD5, opt.ETag != nil)
	if err != nil {
		return PartInfo{}, err
	}
	p := &meta.Part{Number: n, ETag: hex.EncodeToString(sum), ModTime: time.Now().UTC()}
	if opt.ETag != nil {
		p.ETag = givenETag(opt.ETag, sum, d)
	}
	if opt.Checksum != nil {
		p.Checksum = opt.Checksum()
	}
	if d != nil {
		p.Size = d.rec.Size
		p.Segments = []meta.Segment{d.segment()}
	}
	err = s.commitData(ctx, d, func(tx meta.Tx) error {
		if err := addRefs(tx, p.Segments); err != nil {
			return err
		}
		return putPartRecord(tx, bucket, key, uploadID, p)
	})
	if err != nil {
		return PartInfo{}, err
	}
	return partInfo(p), nil
}

func (s *Store) checkUpload(ctx context.Context, bucket, key, id string) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	if err := ValidateKey(key); err != nil {
		return err
	}
	return s.idx.View(ctx, func(tx meta.Tx) error {
		if err := requireBucket(tx, bucket); err != nil {
			return err
		}
		_, err := getUpload(tx, bucket, key, id)
		return err
	})
}

// CopyPart makes part n of an upload from bytes [offset, offset+length) of
// a source version (length < 0: to its end) without copying them. The
// part's ETag is the MD5 of those bytes: the source's own ETag when the
// whole of a single-part object is copied, otherwise computed by reading
// the range.
func (s *Store) CopyPart(ctx context.Context, bucket, key, uploadID string, n int, srcBucket, srcKey, srcVersionID string, offset, length int64) (PartInfo, error) {
	if err := s.pending.waitKey(ctx, srcBucket, srcKey); err != nil {
		return PartInfo{}, err
	}
	if err := validatePartNumber(n); err != nil {
		return PartInfo{}, err
	}
	if err := s.checkUpload(ctx, bucket, key, uploadID); err != nil {
		return PartInfo{}, err
	}
	r, err := s.Open(ctx, srcBucket, srcKey, GetOptions{VersionID: srcVersionID})
	if err != nil {
		return PartInfo{}, err
	}
	defer func() { _ = r.Close() }()
	size := r.Size()
	if length < 0 {
		length = size - offset
	}
	if offset < 0 || length < 0 || offset+length > size || (offset >= size && size > 0) {
		return PartInfo{}, fmt.Errorf("%w: bytes %d+%d of a %d-byte source", ErrInvalidRange, offset, length, size)
	}
	etag := r.info.ETag
	if offset != 0 || length != size || strings.Contains(etag, "-") {
		h := md5.New()
		if _, err := io.Copy(h, io.NewSectionReader(r, offset, length)); err != nil {
			return PartInfo{}, err
		}
		etag = hex.EncodeToString(h.Sum(nil))
	}
	p := &meta.Part{Number: n, ETag: etag, Size: length, ModTime: time.Now().UTC(),
		Segments: sliceSegments(r.segments(), offset, length)}
	err = s.commit(ctx, nil, 0, func(tx meta.Tx) error {
		if err := addRefs(tx, p.Segments); err != nil {
			return err
		}
		return putPartRecord(tx, bucket, key, uploadID, p)
	})
	if err != nil {
		return PartInfo{}, err
	}
	return partInfo(p), nil
}

// sliceSegments returns the segments covering [off, off+n) of segs.
func sliceSegments(segs []meta.Segment, off, n int64) []meta.Segment {
	var out []meta.Segment
	for _, sg := range segs {
		if n <= 0 {
			break
		}
		if off >= sg.Length {
			off -= sg.Length
			continue
		}
		take := min(sg.Length-off, n)
		out = append(out, meta.Segment{Data: sg.Data, Offset: sg.Offset + off, Length: take})
		n -= take
		off = 0
	}
	return out
}

// CompleteMultipartUpload makes the listed parts, in order, the new current
// version of the upload's key, without copying bytes. Parts must be in
// strictly ascending order (ErrInvalidPartOrder), uploaded with matching
// ETags (ErrInvalidPart), and all but the last at least the minimum part
// size (ErrEntityTooSmall); failures are *PartError. Unlisted parts are
// released. The ETag is the MD5 of the parts' MD5s followed by "-N".
func (s *Store) CompleteMultipartUpload(ctx context.Context, bucket, key, uploadID string, parts []CompletePart, opt PutOptions) (ObjectInfo, error) {
	if err := s.pending.waitKey(ctx, bucket, key); err != nil {
		return ObjectInfo{}, err
	}
	if err := s.checkOpen(); err != nil {
		return ObjectInfo{}, err
	}
	if err := ValidateKey(key); err != nil {
		return ObjectInfo{}, err
	}
	if err := validateIfNoneMatch(opt.IfNoneMatch); err != nil {
		return ObjectInfo{}, err
	}
	if len(parts) == 0 {
		return ObjectInfo{}, fmt.Errorf("%w: no parts", ErrInvalidPart)
	}
	for i, p := range parts {
		if err := validatePartNumber(p.Number); err != nil {
			return ObjectInfo{}, &PartError{Number: p.Number, Err: err}
		}
		if i > 0 && p.Number <= parts[i-1].Number {
			return ObjectInfo{}, &PartError{Number: p.Number, Err: ErrInvalidPartOrder}
		}
	}
	retryETag := completeETag(parts)
	var v *meta.Version
	replay := false
	err := s.commit(ctx, nil, 0, func(tx meta.Tx) error {
		replay = false
		b, err := getBucket(tx, bucket)
		if err != nil {
			return err
		}
		u, err := getUpload(tx, bucket, key, uploadID)
		if errors.Is(err, ErrNoSuchUpload) {
			// A retry of a complete that succeeded (its answer was lost)
			// gets the same answer, as S3 gives: the key's current
			// version is this upload with these parts.
			cur, cerr := currentVersion(tx, bucket, key)
			if cerr == nil && cur != nil && cur.UploadID == uploadID && cur.ETag == retryETag {
				v, replay = cur, true
				return nil
			}
		}
		if err != nil {
			return err
		}
		cur, err := currentVersion(tx, bucket, key)
		if err != nil {
			return err
		}
		if err := checkConds(cur, key, opt.IfMatch, opt.IfNoneMatch); err != nil {
			return err
		}
		v = &meta.Version{ModTime: time.Now().UTC(), ContentType: u.ContentType, Meta: u.Meta, UploadID: uploadID, Attrs: u.Attrs}
		var segs []meta.Segment
		listed := map[int]bool{}
		infos := make([]PartInfo, 0, len(parts))
		sums := md5.New()
		for i, cp := range parts {
			p, err := getPart(tx, uploadID, cp.Number)
			if err != nil {
				return err
			}
			if p == nil || normETag(cp.ETag) != p.ETag || (cp.Checksum != "" && cp.Checksum != p.Checksum) {
				return &PartError{Number: cp.Number, Err: ErrInvalidPart}
			}
			if i < len(parts)-1 && p.Size < s.opt.MinPartSize {
				return &PartError{Number: cp.Number, Err: fmt.Errorf("%w: %d bytes, the minimum is %d", ErrEntityTooSmall, p.Size, s.opt.MinPartSize)}
			}
			raw, err := hex.DecodeString(p.ETag)
			if err != nil {
				return &PartError{Number: cp.Number, Err: ErrInvalidPart}
			}
			sums.Write(raw)
			listed[cp.Number] = true
			v.Size += p.Size
			segs = append(segs, p.Segments...)
			v.PartSizes = append(v.PartSizes, p.Size)
			infos = append(infos, partInfo(p))
		}
		v.ETag = fmt.Sprintf("%s-%d", hex.EncodeToString(sums.Sum(nil)), len(parts))
		if opt.Completing != nil {
			v.Meta = maps.Clone(v.Meta)
			if v.Meta == nil {
				v.Meta = map[string]string{}
			}
			v.Attrs.Sys = maps.Clone(v.Attrs.Sys)
			if err := opt.Completing(infos, v.Meta, &v.Attrs); err != nil {
				return err
			}
		}
		// The listed parts' references pass to the version; the others go.
		if err := deleteUpload(tx, u, listed); err != nil {
			return err
		}
		if err := s.setSegments(tx, v, segs); err != nil {
			return err
		}
		return installVersion(tx, b, key, v)
	})
	if err != nil {
		return ObjectInfo{}, err
	}
	if !replay {
		s.notify(Event{Op: OpPut, Bucket: bucket, Key: key})
		s.noteSegments(bucket, key, v.VersionID, v.SegmentCount())
	}
	return toInfo(bucket, key, v, true), nil
}

// completeETag is the S3 ETag of an object made of parts with these
// ETags ("" when one is not an MD5).
func completeETag(parts []CompletePart) string {
	sums := md5.New()
	for _, p := range parts {
		raw, err := hex.DecodeString(normETag(p.ETag))
		if err != nil || len(raw) != md5.Size {
			return ""
		}
		sums.Write(raw)
	}
	return fmt.Sprintf("%s-%d", hex.EncodeToString(sums.Sum(nil)), len(parts))
}

// deleteUpload removes an upload and its parts, dropping the references of
// the parts not in keep.
func deleteUpload(tx meta.Tx, u *meta.Upload, keep map[int]bool) error {
	var parts []meta.Part
	prefix := meta.PartPrefix(u.UploadID)
	err := meta.Scan(tx, meta.Parts, prefix, func(_, raw []byte) error {
		var p meta.Part
		if err := meta.Decode(raw, &p); err != nil {
			return err
		}
		parts = append(parts, p)
		return nil
	})
	if err != nil {
		return err
	}
	for _, p := range parts {
		if !keep[p.Number] {
			if err := dropRefs(tx, p.Segments); err != nil {
				return err
			}
		}
		if err := tx.Delete(meta.Parts, meta.PartKey(u.UploadID, p.Number)); err != nil {
			return err
		}
	}
	if err := tx.Delete(meta.UploadIDs, []byte(u.UploadID)); err != nil {
		return err
	}
	return tx.Delete(meta.Uploads, meta.UploadKey(u.Bucket, u.Key, u.UploadID))
}

// AbortMultipartUpload discards an upload and frees its parts.
func (s *Store) AbortMultipartUpload(ctx context.Context, bucket, key, uploadID string) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	return s.commit(ctx, nil, 0, func(tx meta.Tx) error {
		if err := requireBucket(tx, bucket); err != nil {
			return err
		}
		u, err := getUpload(tx, bucket, key, uploadID)
		if err != nil {
			return err
		}
		return deleteUpload(tx, u, nil)
	})
}

// ListUploadsOptions select a page of ListMultipartUploads.
type ListUploadsOptions struct {
	Prefix         string
	KeyMarker      string
	UploadIDMarker string
	MaxUploads     int
}

// ListMultipartUploads lists incomplete uploads by key, then upload id.
func (s *Store) ListMultipartUploads(ctx context.Context, bucket string, opt ListUploadsOptions) (uploads []UploadInfo, truncated bool, err error) {
	max, err := maxKeys(opt.MaxUploads)
	if err != nil {
		return nil, false, err
	}
	err = s.idx.View(ctx, func(tx meta.Tx) error {
		if err := requireBucket(tx, bucket); err != nil {
			return err
		}
		full := meta.ObjectKey(bucket, opt.Prefix)
		start := full
		switch {
		case opt.KeyMarker != "" && opt.UploadIDMarker != "":
			start = append(meta.UploadKey(bucket, opt.KeyMarker, opt.UploadIDMarker), 0)
		case opt.KeyMarker != "":
			start = append(meta.ObjectKey(bucket, opt.KeyMarker), 1)
		}
		if bytes.Compare(start, full) < 0 {
			start = full // a marker before the prefix does not skip into it
		}
		c := tx.Cursor(meta.Uploads)
		k, raw := c.Seek(start)
		for ; meta.HasPrefix(k, full); k, raw = c.Next() {
			if len(uploads) == max {
				truncated = true
				break
			}
			var u meta.Upload
			if err := meta.Decode(raw, &u); err != nil {
				return err
			}
			uploads = append(uploads, UploadInfo{Bucket: u.Bucket, Key: u.Key, UploadID: u.UploadID, Initiated: u.Initiated, Attrs: u.Attrs})
		}
		return c.Err()
	})
	return uploads, truncated, err
}

// ListParts lists an upload's parts with numbers above marker.
func (s *Store) ListParts(ctx context.Context, bucket, key, uploadID string, marker, maxParts int) (parts []PartInfo, truncated bool, err error) {
	max, err := maxKeys(maxParts)
	if err != nil {
		return nil, false, err
	}
	err = s.idx.View(ctx, func(tx meta.Tx) error {
		if err := requireBucket(tx, bucket); err != nil {
			return err
		}
		if _, err := getUpload(tx, bucket, key, uploadID); err != nil {
			return err
		}
		prefix := meta.PartPrefix(uploadID)
		c := tx.Cursor(meta.Parts)
		for k, raw := c.Seek(meta.PartKey(uploadID, marker+1)); meta.HasPrefix(k, prefix); k, raw = c.Next() {
			if len(parts) == max {
				truncated = true
				break
			}
			var p meta.Part
			if err := meta.Decode(raw, &p); err != nil {
				return err
			}
			parts = append(parts, partInfo(&p))
		}
		return c.Err()
	})
	return parts, truncated, err
}
