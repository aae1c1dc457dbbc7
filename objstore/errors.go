package objstore

import (
	"errors"
	"fmt"

	"github.com/cairnstore/cairn/objstore/meta"
)

// Sentinel errors of the store. Every face maps them once (S3 codes in
// frontends/s3/errors.go, errno in fs/errno.go, exit codes in cmd/cairn).
// Errors returned by the Store wrap one of these; match with errors.Is.
var (
	// ErrInvalidArgument: a malformed option or value that fits no more
	// precise sentinel (negative size, bad range syntax, unknown setting).
	ErrInvalidArgument = errors.New("invalid argument")
	// ErrInvalidBucketName: the name breaks the S3 bucket naming rules.
	ErrInvalidBucketName = errors.New("invalid bucket name")
	// ErrBucketExists: CreateBucket on a name that exists.
	ErrBucketExists = errors.New("bucket already exists")
	// ErrNoSuchBucket: the bucket does not exist.
	ErrNoSuchBucket = errors.New("no such bucket")
	// ErrBucketNotEmpty: DeleteBucket on a bucket holding objects or
	// versions (its incomplete multipart uploads go with it).
	ErrBucketNotEmpty = errors.New("bucket not empty")
	// ErrInvalidKey: a key that is empty, longer than 1024 bytes, not
	// valid UTF-8 or holding a NUL byte.
	ErrInvalidKey = errors.New("invalid object key")
	// ErrNoSuchKey: the key has no current version (absent or deleted).
	ErrNoSuchKey = errors.New("no such key")
	// ErrNoSuchVersion: the version id does not exist for the key.
	ErrNoSuchVersion = errors.New("no such version")
	// ErrDeleteMarker: the addressed version is a delete marker, which has
	// no data (S3 answers 405 for a GET of one by version id).
	ErrDeleteMarker = errors.New("version is a delete marker")
	// ErrPreconditionFailed: If-Match / If-None-Match did not hold.
	ErrPreconditionFailed = errors.New("precondition failed")
	// ErrInvalidRange: a byte range that does not overlap the object.
	ErrInvalidRange = errors.New("requested range not satisfiable")
	// ErrNoSuchUpload: the multipart upload id is unknown (never created,
	// completed or aborted).
	ErrNoSuchUpload = errors.New("no such upload")
	// ErrInvalidPartNumber: a part number outside 1..10000.
	ErrInvalidPartNumber = errors.New("invalid part number")
	// ErrInvalidPart: a completed part that was not uploaded or whose ETag
	// does not match.
	ErrInvalidPart = errors.New("invalid part")
	// ErrInvalidPartOrder: the complete list is not in ascending order.
	ErrInvalidPartOrder = errors.New("invalid part order")
	// ErrEntityTooSmall: a part other than the last is below the minimum
	// part size.
	ErrEntityTooSmall = errors.New("entity too small")
	// ErrIncompleteBody: the body ended before the declared size, or ran
	// past it.
	ErrIncompleteBody = errors.New("incomplete body")
	// ErrBadDigest: the body does not match the MD5 the caller declared.
	ErrBadDigest = errors.New("bad digest")
	// ErrQuorumLost: too few drives answered to write (or read) safely;
	// nothing was made visible.
	ErrQuorumLost = errors.New("drive quorum lost")
	// ErrDataCorrupt: the data cannot be rebuilt from the shards left.
	ErrDataCorrupt = errors.New("data corrupt beyond repair")
	// ErrInternal: a bug caught at run time (a panic in a transaction); the
	// operation had no effect.
	ErrInternal = errors.New("internal error")
	// ErrClosed: the store is closed.
	ErrClosed = errors.New("store closed")
	// ErrTooManyChanges: one operation would change more index entries
	// than the index takes in one transaction (meta.Limits: an index on
	// etcd takes 128 writes by default); nothing was changed. Renaming a
	// smaller prefix, or fewer keys at once, fits.
	ErrTooManyChanges = errors.New("operation changes too many keys at once")
	// ErrObjectLocked: the operation would remove a version under object
	// lock (a retention period not yet over, or a legal hold), or shorten
	// or remove a retention the lock does not let be shortened.
	ErrObjectLocked = errors.New("object version is locked")
	// ErrInvalidBucketState: the bucket's state does not allow the change
	// (object lock on a bucket without versioning enabled, suspending
	// versioning on a bucket with object lock).
	ErrInvalidBucketState = errors.New("invalid bucket state")
	// ErrInvalidWriteOffset: an Append whose offset is not the current
	// version's size (0 for a key without one): another append or a put
	// got there first. Nothing was changed.
	ErrInvalidWriteOffset = errors.New("write offset is not the object's size")
	// ErrTooManySegments: an Append would give the version more than
	// MaxSegments segments (or parts). Rewriting the object (a copy onto
	// itself that rewrites its bytes, or a put) resets the count.
	ErrTooManySegments = errors.New("object has too many segments to append to")
	// ErrNotAppendable: an Append to a version whose bytes cannot be
	// extended in place: ciphertext keyed to the object (SysEncryption).
	ErrNotAppendable = errors.New("object cannot be appended to")
	// ErrUnavailable: the index cannot be reached now (an etcd index
	// that lost its cluster: meta.ErrUnavailable); retry later. Nothing
	// was committed, unless the error also says the outcome is unknown
	// (meta.ErrOutcomeUnknown), and nothing is half-written either way.
	ErrUnavailable = meta.ErrUnavailable
	// ErrBusy: the index refused a commit that lost to concurrent writers
	// (the nodes of a cluster) too many times in a row (meta.ErrBusy);
	// nothing was committed; retry.
	ErrBusy = meta.ErrBusy
)

// IsStoreError says whether err is, or wraps, one of the store's sentinel
// errors above. A face that shows a client its own words only (the
// catalog's ClientMessage) cuts such causes, whose texts name buckets and
// keys of the store.
func IsStoreError(err error) bool {
	for _, s := range sentinels() {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

// sentinels returns every sentinel error above. A new sentinel goes here
// too; TestSentinelsListed fails until it does.
func sentinels() []error {
	return []error{
		ErrInvalidArgument, ErrInvalidBucketName, ErrBucketExists, ErrNoSuchBucket,
		ErrBucketNotEmpty, ErrInvalidKey, ErrNoSuchKey, ErrNoSuchVersion,
		ErrDeleteMarker, ErrPreconditionFailed, ErrInvalidRange, ErrNoSuchUpload,
		ErrInvalidPartNumber, ErrInvalidPart, ErrInvalidPartOrder, ErrEntityTooSmall,
		ErrIncompleteBody, ErrBadDigest, ErrQuorumLost, ErrDataCorrupt,
		ErrInternal, ErrClosed, ErrTooManyChanges, ErrObjectLocked,
		ErrInvalidBucketState, ErrInvalidWriteOffset, ErrTooManySegments, ErrNotAppendable,
		ErrUnavailable, ErrBusy,
	}
}

// PartError tells which part of a complete request was rejected; it wraps
// ErrInvalidPart, ErrInvalidPartOrder or ErrEntityTooSmall.
type PartError struct {
	Number int
	Err    error
}

func (e *PartError) Error() string { return fmt.Sprintf("part %d: %v", e.Number, e.Err) }
func (e *PartError) Unwrap() error { return e.Err }
