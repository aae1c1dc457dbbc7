package meta

import (
	"encoding/json"
	"fmt"
	"time"
)

// Layout is the drive set recorded at first open; later opens must match.
type Layout struct {
	Set       string `json:"set"`
	Drives    int    `json:"drives"`
	Parity    int    `json:"parity"`
	BlockSize int    `json:"block_size"`
}

// Bucket is a bucket's record.
type Bucket struct {
	Name       string          `json:"name"`
	Created    time.Time       `json:"created"`
	Versioning string          `json:"versioning,omitempty"` // "", "Enabled" or "Suspended"
	Lifecycle  []LifecycleRule `json:"lifecycle,omitempty"`
	// Owner is the access key of the user who created the bucket; empty
	// for buckets made before owners were kept (the root owns them).
	Owner string `json:"owner,omitempty"`
	// ObjectLock is set once object lock is enabled; it never clears, and
	// versioning can no longer be suspended.
	ObjectLock bool `json:"object_lock,omitempty"`
	// Config holds the faces' bucket documents by name (an S3 ACL, policy,
	// CORS rules...), opaque to the store.
	Config map[string][]byte `json:"config,omitempty"`
}

// LifecycleRule is the part of an S3 lifecycle rule the store acts on.
// A rule applies to a version whose key has Prefix, that carries every
// one of Tags and whose size is within the size bounds; its actions are
// each off at their zero value.
type LifecycleRule struct {
	ID      string `json:"id,omitempty"`
	Prefix  string `json:"prefix,omitempty"`
	Enabled bool   `json:"enabled"`
	// Tags must all be on a version for the rule to apply to it. A
	// version's tags are read from its Attrs.Sys record named TagRecord,
	// in the URL query encoding (url.QueryEscape'd key=value pairs joined
	// by "&"); the store reads that record only for such a rule.
	Tags      []Tag  `json:"tags,omitempty"`
	TagRecord string `json:"tag_record,omitempty"`
	// SizeGreaterThan and SizeLessThan bound the sizes of the versions
	// the rule applies to (strictly); nil is no bound.
	SizeGreaterThan *int64 `json:"size_gt,omitempty"`
	SizeLessThan    *int64 `json:"size_lt,omitempty"`
	// AbortIncompleteDays aborts multipart uploads initiated more than
	// this many days ago; zero means no such action.
	AbortIncompleteDays int `json:"abort_incomplete_days,omitempty"`
	// ExpirationDays deletes current versions older than this many days;
	// zero means no such action.
	ExpirationDays int `json:"expiration_days,omitempty"`
	// ExpirationDate deletes current versions once it has passed; zero
	// means no such action.
	ExpirationDate time.Time `json:"expiration_date,omitzero"`
	// ExpiredDeleteMarker removes a delete marker that is the only version
	// left of its key.
	ExpiredDeleteMarker bool `json:"expired_delete_marker,omitempty"`
	// NoncurrentDays removes versions noncurrent for more than this many
	// days, keeping the NewerNoncurrent newest noncurrent versions of each
	// key; zero means no such action.
	NoncurrentDays  int `json:"noncurrent_days,omitempty"`
	NewerNoncurrent int `json:"newer_noncurrent,omitempty"`
	// Doc is the face's own rendering of the rule (an S3 Rule element),
	// opaque to the store, kept so that the face returns what it was given.
	Doc []byte `json:"doc,omitempty"`
}

// Tag is one key-value pair of a lifecycle rule's tag filter.
type Tag struct {
	Key   string `json:"k"`
	Value string `json:"v"`
}

// Segment is a byte range of one erasure-coded data object. An object or
// part is the concatenation of its segments.
type Segment struct {
	Data   string `json:"d"` // data id, hex
	Offset int64  `json:"o,omitempty"`
	Length int64  `json:"l"`
}

// ChunkRef names one chunk record of a chunked version: its id in the
// chunks table, the bytes it covers and how many segments it holds.
type ChunkRef struct {
	ID     uint64 `json:"id"`
	Length int64  `json:"l"`
	Segs   int    `json:"n"`
}

// Chunk is a run of a chunked version's segments. A chunk record is
// immutable: written once, named by exactly one version record (and by
// the objects table's copy of it while it is current), deleted with it.
// Its segments count in their data's Refs, once each, as a flat
// version's do.
type Chunk struct {
	Segments []Segment `json:"segs"`
}

// SegmentCount is how many segments the version holds, flat or chunked.
func (v *Version) SegmentCount() int {
	if len(v.Chunks) == 0 {
		return len(v.Segments)
	}
	n := 0
	for _, c := range v.Chunks {
		n += c.Segs
	}
	return n
}

// Version is one version of a key.
type Version struct {
	VersionID    string            `json:"vid"` // "null" for the null version
	Seq          uint64            `json:"seq"`
	Size         int64             `json:"size"`
	ETag         string            `json:"etag,omitempty"`
	ModTime      time.Time         `json:"mtime"`
	ContentType  string            `json:"ctype,omitempty"`
	Meta         map[string]string `json:"meta,omitempty"`
	DeleteMarker bool              `json:"dm,omitempty"`
	Segments     []Segment         `json:"segs,omitempty"`
	// Chunks, when set, hold the version's segments instead of Segments:
	// the content is the concatenation of the chunk records (the chunks
	// table) named here, in order. Each chunk record belongs to this one
	// version (see Chunk); a long list of segments is kept this way so
	// that changing a few of them rewrites only the chunks they are in.
	Chunks []ChunkRef `json:"chunks,omitempty"`
	// PartSizes holds the part sizes of a multipart object, in order.
	PartSizes []int64 `json:"parts,omitempty"`
	// UploadID is the multipart upload that made this version, so that a
	// retried complete of it can be answered again.
	UploadID string `json:"upid,omitempty"`
	Attrs    Attrs  `json:"attrs,omitzero"`
}

// Attrs are a version's attributes beyond its data and HTTP metadata.
type Attrs struct {
	// Owner is the access key of the user who wrote the version.
	Owner string `json:"owner,omitempty"`
	// Sys holds the faces' own per-version records (an S3 ACL, tags,
	// encryption parameters), opaque to the store (but for the tag record
	// a lifecycle rule names, LifecycleRule.TagRecord) and never shown as
	// user metadata.
	Sys map[string]string `json:"sys,omitempty"`
	// Retention and LegalHold are the version's object lock.
	Retention Retention `json:"retention,omitzero"`
	LegalHold bool      `json:"legal_hold,omitempty"`
}

// Retention is an object-lock retention period.
type Retention struct {
	Mode  string    `json:"mode,omitempty"` // "", "GOVERNANCE" or "COMPLIANCE"
	Until time.Time `json:"until,omitzero"`
}

// Object-lock retention modes.
const (
	RetentionGovernance = "GOVERNANCE"
	RetentionCompliance = "COMPLIANCE"
)

// Locked reports whether the retention forbids removing the version at now.
func (r Retention) Locked(now time.Time) bool {
	return r.Mode != "" && now.Before(r.Until)
}

// Data describes one erasure-coded data object (one shard file per drive).
type Data struct {
	K         int       `json:"k"`
	M         int       `json:"m"`
	BlockSize int       `json:"bs"`
	Size      int64     `json:"size"`
	Refs      int64     `json:"refs"`
	Bucket    string    `json:"bucket,omitempty"` // where it was first written, a hint
	Key       string    `json:"key,omitempty"`
	Created   time.Time `json:"created"`
	// Pack, when not zero, is the pack segment holding the shard records
	// of this (small) data object, at Off for Len bytes on every drive;
	// zero means one shard file per drive.
	Pack uint64 `json:"pack,omitempty"`
	Off  int64  `json:"off,omitempty"`
	Len  int64  `json:"len,omitempty"`
}

// PackInfo describes a pack segment.
type PackInfo struct {
	Created time.Time `json:"created"`
	// Live counts the record bytes of data not yet freed by the cleaner;
	// a segment no longer written to whose Live is zero can be removed.
	Live int64 `json:"live"`
	// Dead is when Live last dropped to zero: a segment is removed only
	// once it has been dead for the store's ReaderGrace.
	Dead time.Time `json:"dead,omitzero"`
	// End is the end of the last committed record: the segment's size.
	End int64 `json:"end"`
}

// GarbageEntry is data waiting for the cleaner.
type GarbageEntry struct {
	Data  Data      `json:"data"`
	Since time.Time `json:"since"`
}

// Lease keeps data or a pack segment from the cleaner on behalf of a
// reader in a process that shares the index, until Until.
type Lease struct {
	Until time.Time `json:"until"`
}

// Upload is an incomplete multipart upload.
type Upload struct {
	Bucket      string            `json:"bucket"`
	Key         string            `json:"key"`
	UploadID    string            `json:"id"`
	Initiated   time.Time         `json:"initiated"`
	ContentType string            `json:"ctype,omitempty"`
	Meta        map[string]string `json:"meta,omitempty"`
	// Attrs are given to the version the upload completes into.
	Attrs Attrs `json:"attrs,omitzero"`
}

// Part is one uploaded part of a multipart upload.
type Part struct {
	Number   int       `json:"n"`
	ETag     string    `json:"etag"`
	Size     int64     `json:"size"`
	ModTime  time.Time `json:"mtime"`
	Segments []Segment `json:"segs"`
	// Checksum is the part's checksum as the face keeps it (for S3,
	// "<algorithm>:<base64 value>"); empty when none was given.
	Checksum string `json:"sum,omitempty"`
}

// Encode marshals a record: Version and Data in their binary form (see
// binary.go), the others as JSON.
func Encode(v any) []byte {
	switch x := v.(type) {
	case *Version:
		return encodeVersion(x)
	case Version:
		return encodeVersion(&x)
	case *Data:
		return encodeData(x)
	case Data:
		return encodeData(&x)
	case *Chunk:
		return encodeChunk(x)
	case Chunk:
		return encodeChunk(&x)
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("meta: encode %T: %v", v, err)) // records are plain data; cannot fail
	}
	return b
}

// Decode unmarshals a record, wrapping ErrCorruptRecord on failure.
func Decode(raw []byte, v any) error {
	if len(raw) > 0 && raw[0] == binaryTag {
		return decodeBinary(raw, v)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("%w: %T: %v", ErrCorruptRecord, v, err)
	}
	return nil
}
