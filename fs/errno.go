package fs

import (
	"context"
	"errors"
	"syscall"

	"github.com/cairnstore/cairn/objstore"
)

// errnoTable maps the store's sentinel errors to errnos. It is the one
// place the mount translates store errors.
func errnoTable() []errnoMapping {
	return []errnoMapping{
		{objstore.ErrNoSuchKey, syscall.ENOENT},
		{objstore.ErrNoSuchBucket, syscall.ENOENT},
		{objstore.ErrNoSuchVersion, syscall.ENOENT},
		{objstore.ErrDeleteMarker, syscall.ENOENT},
		{objstore.ErrPreconditionFailed, syscall.EEXIST},
		{objstore.ErrBucketExists, syscall.EEXIST},
		{objstore.ErrBucketNotEmpty, syscall.ENOTEMPTY},
		{objstore.ErrInvalidKey, syscall.EINVAL},
		{objstore.ErrInvalidBucketName, syscall.EINVAL},
		{objstore.ErrInvalidArgument, syscall.EINVAL},
		{objstore.ErrInvalidRange, syscall.EINVAL},
		{objstore.ErrIncompleteBody, syscall.EIO},
		{objstore.ErrBadDigest, syscall.EIO},
		{objstore.ErrQuorumLost, syscall.EIO},
		{objstore.ErrDataCorrupt, syscall.EIO},
		{objstore.ErrInternal, syscall.EIO},
		{objstore.ErrClosed, syscall.EIO},
		// The index (etcd) cannot be reached: the operation may succeed
		// later.
		{objstore.ErrUnavailable, syscall.EIO},
		// Too many concurrent writers contended in the index: the
		// operation may succeed if tried again.
		{objstore.ErrBusy, syscall.EIO},
		// Too many keys for one index transaction: a rename of a very
		// large directory on an index with bounded transactions.
		{objstore.ErrTooManyChanges, syscall.E2BIG},
		// Object lock: removing or overwriting a locked version.
		{objstore.ErrObjectLocked, syscall.EPERM},
		{objstore.ErrInvalidBucketState, syscall.EPERM},
		// Appends: the size changed meanwhile, too many segments, an
		// encrypted object.
		{objstore.ErrInvalidWriteOffset, syscall.EAGAIN},
		{objstore.ErrTooManySegments, syscall.EFBIG},
		{objstore.ErrNotAppendable, syscall.EACCES},
		// The mount's own: a version only the S3 face can read.
		{errEncrypted, syscall.EACCES},
	}
}

type errnoMapping struct {
	err   error
	errno syscall.Errno
}

// errnoOf is the errno that answers err. Errors carrying an errno of
// their own (ENOSPC from a full drive or staging disk) keep it.
func errnoOf(err error) syscall.Errno {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		// A full drive or staging disk, even when it cost the write
		// its quorum.
		return syscall.ENOSPC
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return syscall.EINTR
	}
	for _, m := range errnoTable() {
		if errors.Is(err, m.err) {
			return m.errno
		}
	}
	if e := syscall.Errno(0); errors.As(err, &e) && e != 0 {
		return e
	}
	return syscall.EIO
}

// errno turns an error of the store (or of a staging file) into the errno
// the mount answers, with a log line saying what the errno alone cannot
// (which drives were lost, say).
func (f *FS) errno(op, path string, err error) syscall.Errno {
	e := errnoOf(err)
	if e == syscall.ENOSYS {
		// The kernel would take it as "operation not implemented" and
		// never ask again (for OPEN or ACCESS, not check at all).
		e = syscall.EIO
	}
	switch e {
	case 0:
	case syscall.ENOENT, syscall.EEXIST, syscall.ENOTEMPTY, syscall.EINTR:
		f.log.Debug().Err(err).Str("op", op).Str("path", path).Msg("mount request failed")
	default:
		f.log.Error().Err(err).Str("op", op).Str("path", path).Str("errno", e.Error()).Msg("mount request failed")
	}
	return e
}
