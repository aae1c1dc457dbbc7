package objstore

import (
	"time"

	"github.com/cairnstore/cairn/objstore/meta"
)

// ObjectInfo describes one version of an object.
type ObjectInfo struct {
	Bucket       string
	Key          string
	VersionID    string // "null" for the null version
	Size         int64
	ETag         string // hex MD5, or the multipart form "<hex>-N"; unquoted
	ModTime      time.Time
	ContentType  string
	Meta         map[string]string // user metadata and stored headers
	DeleteMarker bool
	IsLatest     bool
	PartsCount   int     // parts of a multipart object, 0 otherwise
	PartSizes    []int64 // their sizes, in order
	Attrs        Attrs   // owner, the faces' records, object lock
}

// Attrs are a version's attributes beyond its data and HTTP metadata: its
// owner, the faces' own per-version records (Sys, opaque to the store) and
// its object lock.
type Attrs = meta.Attrs

// SysEncryption is the key of Attrs.Sys under which a face that encrypts
// data before the store sees it (the S3 face's server-side encryption)
// keeps the version's encryption record. The store holds such a version's
// ciphertext: other faces must neither serve its bytes as the object's
// nor rewrite them in part, and its Size is the ciphertext's.
const SysEncryption = "s3.sse"

// Encrypted reports whether a version's data is ciphertext that only the
// face that wrote it can read (SysEncryption).
func Encrypted(info ObjectInfo) bool { return info.Attrs.Sys[SysEncryption] != "" }

// Retention is an object-lock retention period.
type Retention = meta.Retention

// Object-lock retention modes.
const (
	RetentionGovernance = meta.RetentionGovernance
	RetentionCompliance = meta.RetentionCompliance
)

// PutOptions are the options of Put and CreateMultipartUpload.
type PutOptions struct {
	ContentType string
	Meta        map[string]string
	// IfMatch makes the write succeed only when the current version's ETag
	// equals it (compare-and-swap); ErrNoSuchKey when there is none.
	IfMatch string
	// IfNoneMatch "*" makes the write succeed only when the key has no
	// current version (create only); an ETag, only when there is none or
	// its ETag differs (RFC 7232). CompleteMultipartUpload takes only "*"
	// (else ErrInvalidArgument).
	IfNoneMatch string
	// ContentMD5, when set, must equal the body's MD5 (ErrBadDigest).
	ContentMD5 []byte
	// FinalMeta, when set, is called once the body has been read to its
	// end and before the commit, to add metadata known only then (such as
	// a checksum sent in a trailer). Put only.
	FinalMeta func(meta map[string]string)
	// Completing, for CompleteMultipartUpload, is called inside its
	// transaction with the parts the object is made of, in order. It may
	// add to the new version's metadata and attributes (its own copies),
	// or refuse the complete by returning an error, which changes nothing.
	Completing func(parts []PartInfo, meta map[string]string, a *Attrs) error
	// Attrs are the new version's attributes.
	Attrs Attrs
	// ETag, when set, is called once the body has been read (as
	// FinalMeta) and its result is the version's ETag in place of the
	// body's MD5, which the store then does not compute (unless
	// ContentMD5 asks it to check it): the S3 face gives an encrypted
	// object its plaintext's MD5 (SSE-S3) or a digest of its stream
	// (SSE-C, SSE-KMS) while the store holds ciphertext. An empty result
	// gets the body's MD5 when it was hashed, an opaque ETag unique to the
	// write otherwise. Put and PutAsync only.
	ETag func() string
	// OnWait, for PatchFuncAsync, is called once, on a goroutine of its
	// own, when something first waits for the put (a reader of its key,
	// Sync, a later put's commit, the store's Close): a source holding
	// its content back for more changes should give it now.
	OnWait func()
}

// GetOptions select what Open and Head read.
type GetOptions struct {
	VersionID string // empty means the current version
	// Committed reads what the index holds now, without waiting for the
	// key's pending puts. The mount reopens the version its last patch
	// made while a newer patch of its own is pending and held back until
	// the mount gives its content (PatchFuncAsync): waiting would wait
	// for the caller.
	Committed bool
}

// DeleteOptions are the options of Delete.
type DeleteOptions struct {
	VersionID string // delete this version permanently
	IfMatch   string // only when the current version has this ETag
	// BypassGovernance lets a delete by version id remove a version whose
	// retention is GOVERNANCE (never COMPLIANCE, never a legal hold). The
	// caller checks the requester may (s3:BypassGovernanceRetention).
	BypassGovernance bool
}

// DeleteResult says what Delete did.
type DeleteResult struct {
	VersionID    string // the delete marker made, or the version removed
	DeleteMarker bool   // a delete marker was made or removed
}

// CopyOptions are the options of Copy.
type CopyOptions struct {
	SrcVersionID string
	// ReplaceMeta replaces content type and metadata with the ones below
	// (S3 x-amz-metadata-directive: REPLACE); otherwise they are copied.
	ReplaceMeta bool
	ContentType string
	Meta        map[string]string
	// SrcIfMatch / SrcIfNoneMatch are checked against the source version
	// inside the copy's transaction.
	SrcIfMatch     string
	SrcIfNoneMatch string
	// IfMatch / IfNoneMatch are checked against the destination.
	IfMatch     string
	IfNoneMatch string
	// AttrsFor, when set, gives the new version's attributes from the
	// source version's, inside the copy's transaction; nil gives none.
	AttrsFor func(src ObjectInfo) Attrs
}

// RenameOptions are the options of Rename and RenamePrefix.
type RenameOptions struct {
	// IfMatch is checked against the source's ETag (Rename only).
	IfMatch string
	// IfNoneMatch "*" refuses to replace an existing destination; for
	// RenamePrefix, any existing key under the destination prefix.
	IfNoneMatch string
	// DestIfMatch is checked against the destination's ETag (Rename only).
	DestIfMatch string
	// ReplaceMarker (RenamePrefix with IfNoneMatch "*") lets the rename
	// replace a destination that holds only the key equal to the prefix
	// itself: an empty directory's marker, which a directory rename
	// replaces as POSIX says.
	ReplaceMarker bool
}

// ListOptions select a page of ListObjects.
type ListOptions struct {
	Prefix    string
	Delimiter string
	// After lists keys strictly after it: S3's marker, start-after or the
	// NextMarker of the previous page (the later of them).
	After   string
	MaxKeys int // zero means 1000
}

// ListPage is one page of ListObjects. Objects and CommonPrefixes are each
// sorted; together they hold at most MaxKeys entries.
type ListPage struct {
	Objects        []ObjectInfo
	CommonPrefixes []string
	IsTruncated    bool
	// NextMarker is the last key or common prefix of the page, to pass as
	// After for the next page; set when IsTruncated.
	NextMarker string
}

// ListVersionsOptions select a page of ListObjectVersions.
type ListVersionsOptions struct {
	Prefix          string
	Delimiter       string
	KeyMarker       string
	VersionIDMarker string
	MaxKeys         int
}

// VersionsPage is one page of ListObjectVersions, newest first per key.
type VersionsPage struct {
	Versions            []ObjectInfo
	CommonPrefixes      []string
	IsTruncated         bool
	NextKeyMarker       string
	NextVersionIDMarker string
}

// BucketInfo describes a bucket.
type BucketInfo struct {
	Name       string
	Created    time.Time
	Versioning string // "", "Enabled" or "Suspended"
	Owner      string // the creator's access key; empty for the root's
	ObjectLock bool
	// Config holds the faces' bucket documents by name (SetBucketConfig).
	// The documents' bytes are read-only: HeadBucket shares them between
	// callers.
	Config map[string][]byte
	// Lifecycle is the bucket's lifecycle rules (SetLifecycle), read-only
	// like Config.
	Lifecycle []LifecycleRule
}

// BucketOptions are the options of CreateBucket.
type BucketOptions struct {
	Owner string
	// ObjectLock creates the bucket with object lock enabled, and so with
	// versioning enabled.
	ObjectLock bool
}

// Versioning states.
const (
	VersioningEnabled   = "Enabled"
	VersioningSuspended = "Suspended"
)

// NullVersion is the version id of versions written while versioning is
// off or suspended.
const NullVersion = "null"
